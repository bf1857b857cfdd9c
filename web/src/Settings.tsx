// Settings: the user's keypair for the CLI (MyKeypair.tsx), and the user's dotfiles (.tmux.conf, .bashrc, .vimrc, …), written into the home of
// every session they start from now on. Add, edit and delete; mistakes show beside the field.
import { useCallback, useEffect, useState } from 'react';
import { Alert, Button, Card, Form, Input, Modal, Popconfirm, Space, Table, Typography } from 'antd';
import type { ButtonProps } from 'antd';
import { api, ApiError } from './api';
import { dataProps } from './dataProps';
import MyKeypair from './MyKeypair';
import { checkPath, checkPermission, Dotfile, DotfileField, fieldOf, HOME, preview } from './dotfiles';

type Editing = { original?: Dotfile };
type FieldErrors = Partial<Record<DotfileField, string>>;

function DotfileEditor({ editing, onClose, onSaved }: { editing: Editing; onClose: () => void; onSaved: () => void }) {
  const o = editing.original;
  const [path, setPath] = useState(o?.path ?? '');
  const [permission, setPermission] = useState(o?.permission ?? '644');
  const [data, setData] = useState(o?.data ?? '');
  const [errors, setErrors] = useState<FieldErrors>({});
  const [busy, setBusy] = useState(false);
  const save = async () => {
    const p = checkPath(path);
    const permErr = checkPermission(permission);
    const local: FieldErrors = {};
    if ('error' in p) local.path = p.error;
    if (permErr) local.permission = permErr;
    setErrors(local);
    if (Object.keys(local).length > 0 || 'error' in p) return;
    setBusy(true);
    try {
      const body = { path: p.path, data, permission: permission.trim() || undefined };
      if (o) await api('PATCH', '/user-config/dotfiles', { body });
      else await api('POST', '/user-config/dotfiles', { body });
      onSaved();
    } catch (e) {
      const msg = e instanceof ApiError ? e.message : String(e);
      setErrors({ [fieldOf(msg)]: msg });
    } finally {
      setBusy(false);
    }
  };
  const status = (f: DotfileField) => (errors[f] ? 'error' : undefined);
  return (
    <Modal open title={o ? `Edit ${o.path}` : 'New dotfile'} onCancel={onClose} onOk={save} okText="Save" confirmLoading={busy} okButtonProps={dataProps<ButtonProps>({ 'data-testid': 'dotfile-save' })} width={640}>
      <Form layout="vertical">
        <Form.Item label={`Path (relative to ${HOME})`} validateStatus={status('path')} help={errors.path} extra={errors.path ? undefined : 'e.g. .tmux.conf, .bashrc, .config/nvim/init.vim'}>
          <Input value={path} disabled={!!o} onChange={(e) => setPath(e.target.value)} data-testid="dotfile-path" />
        </Form.Item>
        <Form.Item label="Permission" validateStatus={status('permission')} help={errors.permission}>
          <Input value={permission} onChange={(e) => setPermission(e.target.value)} style={{ width: 120 }} data-testid="dotfile-permission" />
        </Form.Item>
        <Form.Item label="Content" validateStatus={status('data')} help={errors.data}>
          <Input.TextArea value={data} onChange={(e) => setData(e.target.value)} autoSize={{ minRows: 6, maxRows: 20 }} style={{ fontFamily: 'monospace' }} data-testid="dotfile-data" />
        </Form.Item>
      </Form>
    </Modal>
  );
}

export default function Settings() {
  const [list, setList] = useState<Dotfile[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<Editing | null>(null);
  const load = useCallback(() => {
    api('GET', '/user-config/dotfiles').then(
      (r) => {
        setList(Array.isArray(r) ? r : [r]);
        setError(null);
      },
      (e) => setError(e instanceof ApiError ? e.message : String(e)),
    );
  }, []);
  useEffect(load, [load]);
  const remove = async (d: Dotfile) => {
    try {
      await api('DELETE', '/user-config/dotfiles', { query: { path: d.path } });
      load();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    }
  };
  return (
    <>
      <MyKeypair />
      <Card
        title="Dotfiles"
        extra={
          <Button type="primary" onClick={() => setEditing({})} data-testid="dotfile-new">
            New dotfile
          </Button>
        }
        data-testid="settings-dotfiles"
      >
        <Typography.Paragraph type="secondary">
          Every session you start from now on finds these files in its home directory ({HOME}). tmux's mouse mode is on in every session
          (scroll and select panes in the web terminal); your own <code>.tmux.conf</code> adds to it or turns it off.
        </Typography.Paragraph>
        {error && <Alert type="error" showIcon message={error} style={{ marginBottom: 12 }} data-testid="dotfiles-error" />}
        <Table
          size="small"
          rowKey="path"
          loading={list === null && !error}
          dataSource={list ?? []}
          pagination={false}
          locale={{ emptyText: 'No dotfiles yet' }}
          columns={[
            { title: 'Path', dataIndex: 'path', render: (p: string) => <code data-testid={`dotfile-row-${p}`}>{p}</code> },
            { title: 'Permission', dataIndex: 'permission', width: 110 },
            { title: 'Content', dataIndex: 'data', render: (d: string) => <Typography.Text type="secondary">{preview(d)}</Typography.Text> },
            {
              title: 'Actions',
              width: 160,
              render: (_: unknown, d: Dotfile) => (
                <Space>
                  <Button size="small" onClick={() => setEditing({ original: d })} data-testid={`dotfile-edit-${d.path}`}>
                    Edit
                  </Button>
                  <Popconfirm title={`Delete ${d.path}?`} onConfirm={() => remove(d)} okButtonProps={dataProps<ButtonProps>({ 'data-testid': 'dotfile-delete-ok' })}>
                    <Button size="small" danger data-testid={`dotfile-delete-${d.path}`}>
                      Delete
                    </Button>
                  </Popconfirm>
                </Space>
              ),
            },
          ]}
        />
        {editing && (
          <DotfileEditor
            editing={editing}
            onClose={() => setEditing(null)}
            onSaved={() => {
              setEditing(null);
              load();
            }}
          />
        )}
      </Card>
    </>
  );
}
