// Settings → My keypair: the user's access keys, for `bai` and the official client. "Make a
// new secret" shows the new secret key once (bai never shows it again); "Revoke" turns a
// keypair off. A user who logs in through the site's directory or OpenID provider has no
// other way to get a key.
import { useCallback, useEffect, useState } from 'react';
import { Alert, Button, Card, Modal, Popconfirm, Space, Table, Tag, Tooltip, Typography } from 'antd';
import type { ButtonProps } from 'antd';
import { api, ApiError, formatTime, Schema } from './api';
import { copyText } from './clipboard';
import { dataProps } from './dataProps';
import { endpointOf, envLines, revokeBlocked } from './keypairs';

type Keypair = Schema<'MyKeypair'>;
type NewSecret = Schema<'NewSecret'>;

const message = (e: unknown) => (e instanceof ApiError ? e.message : String(e));

/** The secret, once: the environment lines and a copy button. */
function SecretOnce({ secret, onClose }: { secret: NewSecret; onClose: () => void }) {
  const lines = envLines(secret.access_key, secret.secret_key, endpointOf(window.location));
  const [copied, setCopied] = useState<string | null>(null);
  const copy = () =>
    copyText(lines).then(
      () => setCopied('Copied.'),
      (e) => setCopied(message(e)),
    );
  return (
    <Modal open title="Your new secret key" onCancel={onClose} onOk={onClose} okText="Done" cancelButtonProps={{ style: { display: 'none' } }} width={720}>
      <Alert type="warning" showIcon message="This is the only time bai shows this secret key: copy it now." style={{ marginBottom: 12 }} />
      <Typography.Paragraph>Put these lines in your shell (or its profile); then <code>bai ps</code> and <code>backend.ai ps</code> work as you:</Typography.Paragraph>
      <pre style={{ background: '#f6f6f6', padding: 12, whiteSpace: 'pre-wrap', wordBreak: 'break-all' }} data-testid="keypair-env">
        {lines}
      </pre>
      <Space>
        <Button type="primary" onClick={copy} data-testid="keypair-copy">
          Copy
        </Button>
        {copied && <Typography.Text type="secondary">{copied}</Typography.Text>}
      </Space>
    </Modal>
  );
}

export default function MyKeypair() {
  const [list, setList] = useState<Keypair[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [secret, setSecret] = useState<NewSecret | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const load = useCallback(() => {
    api('GET', '/user/keypairs').then(
      (r) => {
        setList(r.items);
        setError(null);
      },
      (e) => setError(message(e)),
    );
  }, []);
  useEffect(load, [load]);
  const act = async (key: string, f: () => Promise<NewSecret | null>) => {
    setBusy(key);
    try {
      const s = await f();
      if (s) setSecret(s);
      setError(null);
      load();
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(null);
    }
  };
  const rotate = (k: Keypair) => act(`secret-${k.access_key}`, () => api('POST', '/user/keypairs/{access_key}/secret', { path: { access_key: k.access_key } }));
  const revoke = (k: Keypair) =>
    act(`revoke-${k.access_key}`, async () => {
      await api('POST', '/user/keypairs/{access_key}/revoke', { path: { access_key: k.access_key } });
      return null;
    });
  const create = () => act('new', () => api('POST', '/user/keypairs'));
  const all = list ?? [];
  return (
    <Card
      title="My keypair"
      extra={
        <Button onClick={create} loading={busy === 'new'} data-testid="keypair-new">
          New keypair
        </Button>
      }
      style={{ marginBottom: 24 }}
      data-testid="settings-keypair"
    >
      <Typography.Paragraph type="secondary">
        The command line client <code>bai</code> and the official client <code>backend.ai</code> sign their requests with a keypair: an access key and a secret key. bai
        shows a secret key only when it makes it: make a new one here (the old one stops working at once) when you need it.
      </Typography.Paragraph>
      {error && <Alert type="error" showIcon message={error} style={{ marginBottom: 12 }} data-testid="keypair-error" />}
      <Table
        size="small"
        rowKey="access_key"
        loading={list === null && !error}
        dataSource={all}
        pagination={false}
        columns={[
          {
            title: 'Access key',
            dataIndex: 'access_key',
            render: (ak: string, k: Keypair) => (
              <Space>
                <Typography.Text code copyable data-testid={`keypair-row-${ak}`}>
                  {ak}
                </Typography.Text>
                {k.login && <Tag>web login</Tag>}
                {k.is_admin && <Tag color="gold">admin</Tag>}
              </Space>
            ),
          },
          { title: 'Made', dataIndex: 'created_at', width: 200, render: (t: string) => formatTime(t) },
          {
            title: 'State',
            dataIndex: 'is_active',
            width: 100,
            render: (on: boolean) => (on ? <Tag color="green">active</Tag> : <Tag color="red">revoked</Tag>),
          },
          {
            title: 'Actions',
            width: 260,
            render: (_: unknown, k: Keypair) => {
              const blocked = revokeBlocked(k, all);
              return (
                <Space>
                  <Popconfirm
                    title="Make a new secret key?"
                    description="The current secret stops working at once."
                    onConfirm={() => rotate(k)}
                    disabled={!k.is_active}
                    okButtonProps={dataProps<ButtonProps>({ 'data-testid': 'keypair-secret-ok' })}
                  >
                    <Button size="small" disabled={!k.is_active} loading={busy === `secret-${k.access_key}`} data-testid={`keypair-secret-${k.access_key}`}>
                      Make a new secret
                    </Button>
                  </Popconfirm>
                  <Tooltip title={blocked}>
                    <span>
                      <Popconfirm
                        title={`Revoke ${k.access_key}?`}
                        description="Requests signed with it are refused from now on."
                        onConfirm={() => revoke(k)}
                        disabled={!!blocked}
                        okButtonProps={dataProps<ButtonProps>({ 'data-testid': 'keypair-revoke-ok' })}
                      >
                        <Button size="small" danger disabled={!!blocked} loading={busy === `revoke-${k.access_key}`} data-testid={`keypair-revoke-${k.access_key}`}>
                          Revoke
                        </Button>
                      </Popconfirm>
                    </span>
                  </Tooltip>
                </Space>
              );
            },
          },
        ]}
      />
      {secret && <SecretOnce secret={secret} onClose={() => setSecret(null)} />}
    </Card>
  );
}
