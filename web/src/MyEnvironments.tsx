// The My Environments page: the images the user made from their sessions ("Convert to image"
// in a session's detail panel), each with its name, full reference, size and origin; its name
// copied, or the image forgotten (off the list and the limit; the engines keep it) or purged
// (deleted from the engines too), each after a confirmation. How many the user has of how
// many they may keep is shown: the commit dialog sends them here when the limit is reached.
import { useCallback, useEffect, useState } from 'react';
import { Alert, App as AntApp, Button, Popconfirm, Space, Table, Tag, Tooltip, Typography } from 'antd';
import type { ButtonProps } from 'antd';
import type { Me } from './api';
import { copyText } from './clipboard';
import { dataProps } from './dataProps';
import { errText } from './dialogs';
import { customizedName, ImageNode } from './images';
import { countText, imageSize, loadCustomized, loadLimit, originOf, ownedBy, Removal, removeImage } from './myenv';

export default function MyEnvironments({ me }: { me: Me }) {
  const { message } = AntApp.useApp();
  const [images, setImages] = useState<ImageNode[] | null>(null);
  const [limit, setLimit] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const [all, l] = await Promise.all([loadCustomized(), loadLimit().catch(() => null)]);
      setImages(ownedBy(all, me.email));
      setLimit(l);
      setError(null);
    } catch (e) {
      setImages((i) => i ?? []);
      setError(`The images cannot be listed: ${errText(e)}`);
    }
  }, [me.email]);
  useEffect(() => {
    load();
  }, [load]);

  const copy = (i: ImageNode) =>
    copyText(i.canonical_name).then(
      () => message.success(<span data-testid="myenv-copied">Copied the image name {i.canonical_name}</span>),
      (e) => message.error(`Cannot copy: ${errText(e)}`),
    );

  const remove = async (how: Removal, i: ImageNode) => {
    const name = customizedName(i);
    setBusy(i.id);
    setError(null);
    try {
      await removeImage(how, i.id);
      message.success(how === 'forget' ? `${name} is forgotten` : `${name} is purged`);
    } catch (e) {
      setError(`${name} could not be ${how === 'forget' ? 'forgotten' : 'purged'}: ${errText(e)}`);
    } finally {
      setBusy(null);
      await load();
    }
  };

  const count = images?.length ?? 0;
  const full = limit !== null && count >= limit;
  return (
    <>
      <Space style={{ marginBottom: 12, width: '100%', justifyContent: 'space-between' }}>
        <Space align="center">
          <Typography.Title level={3} style={{ margin: 0 }}>My Environments</Typography.Title>
          {images && (
            <Tag color={full ? 'orange' : 'default'} data-testid="myenv-count">
              {countText(count, limit)}
            </Tag>
          )}
        </Space>
        <Button onClick={load} data-testid="myenv-reload">Reload</Button>
      </Space>
      <Typography.Paragraph type="secondary">
        Images you made from your sessions (Convert to image, in a session&apos;s detail panel). Launch one from the launcher&apos;s
        Customized environments. Forget takes an image off this list and your limit (the engines keep its files); Purge also
        deletes it from every engine.
      </Typography.Paragraph>
      {error && <Alert type="error" showIcon closable onClose={() => setError(null)} message={error} style={{ marginBottom: 12 }} data-testid="myenv-error" />}
      <Table<ImageNode>
        rowKey="id"
        loading={images === null}
        dataSource={images ?? []}
        pagination={false}
        data-testid="myenv-table"
        locale={{ emptyText: 'No customized images: convert a running session to an image from its detail panel.' }}
        columns={[
          {
            title: 'Name',
            render: (_, i) => (
              <Typography.Text strong style={{ whiteSpace: 'nowrap' }} data-testid={`myenv-name-${customizedName(i)}`}>{customizedName(i)}</Typography.Text>
            ),
          },
          {
            title: 'Image name',
            render: (_, i) => (
              <Typography.Text code style={{ wordBreak: 'break-all' }} data-testid={`myenv-ref-${customizedName(i)}`}>{i.canonical_name}</Typography.Text>
            ),
          },
          {
            title: 'Size',
            render: (_, i) => (
              <Tooltip title={i.size_bytes > 0 ? `${i.size_bytes.toLocaleString()} bytes` : 'The engine has not said'}>
                <span style={{ whiteSpace: 'nowrap' }} data-testid={`myenv-size-${customizedName(i)}`}>{imageSize(i)}</span>
              </Tooltip>
            ),
          },
          {
            title: 'Made from',
            render: (_, i) => <span data-testid={`myenv-origin-${customizedName(i)}`}>{originOf(i)}</span>,
          },
          {
            title: 'Actions',
            render: (_, i) => {
              const name = customizedName(i);
              return (
                <Space>
                  <Button size="small" onClick={() => copy(i)} data-testid={`myenv-copy-${name}`}>Copy name</Button>
                  <Popconfirm
                    title={`Forget ${name}?`}
                    description="It leaves this list and no longer counts toward your limit; the engines keep its files."
                    okText="Forget"
                    okButtonProps={dataProps<ButtonProps>({ 'data-testid': 'myenv-forget-ok' })}
                    onConfirm={() => remove('forget', i)}
                  >
                    <Button size="small" loading={busy === i.id} disabled={busy !== null && busy !== i.id} data-testid={`myenv-forget-${name}`}>Forget</Button>
                  </Popconfirm>
                  <Popconfirm
                    title={`Purge ${name}?`}
                    description="It is deleted from every engine that holds it. This cannot be undone."
                    okText="Purge"
                    okButtonProps={dataProps<ButtonProps>({ danger: true, 'data-testid': 'myenv-purge-ok' })}
                    onConfirm={() => remove('purge', i)}
                  >
                    <Button size="small" danger loading={busy === i.id} disabled={busy !== null && busy !== i.id} data-testid={`myenv-purge-${name}`}>Purge</Button>
                  </Popconfirm>
                </Space>
              );
            },
          },
        ]}
      />
    </>
  );
}
