import { useCallback, useEffect, useState } from 'react';
import { App as AntApp, Button, Popconfirm, Radio, Space, Table, Tag, Typography } from 'antd';
import { api, ApiError, formatBytes, Schema } from './api';
import NameDialog from './NameDialog';
import FolderExplorer from './FolderExplorer';
import { Invitations, ShareDialog } from './Sharing';
import SftpDialog from './SftpDialog';
import { followTask, taskStreamUrl } from './bgtask';
import { folderName } from './validate';

type Folder = Schema<'Folder'>;
type UsageMode = Schema<'UsageMode'>;

const USAGE_MODES: { value: UsageMode; label: string; help: string }[] = [
  { value: 'general', label: 'General', help: 'Plain data, mounted into sessions.' },
  { value: 'model', label: 'Model', help: 'A model store with a model-definition.yaml: it can be served (Serving page).' },
  { value: 'data', label: 'Data', help: 'A dataset.' },
];

function err(e: unknown) {
  return e instanceof ApiError ? e.message : String(e);
}

/** Folders in the trash: kept whole until restored or deleted for good. */
function Trash({ folders, reload, onError }: { folders: Folder[]; reload: () => void; onError: (e: unknown) => void }) {
  if (folders.length === 0) return null;
  return (
    <>
      <Typography.Title level={5} style={{ marginTop: 24 }}>Trash</Typography.Title>
      <Table<Folder>
        rowKey="id"
        dataSource={folders}
        pagination={false}
        size="small"
        data-testid="trash-table"
        columns={[
          { title: 'Name', dataIndex: 'name', render: (n: string) => <span data-testid={`trash-${n}`}>{n}</span> },
          { title: 'Host', dataIndex: 'host' },
          { title: 'Owner', render: (_, f) => (f.group ? `project ${f.group}` : 'you') },
          {
            title: 'Controls',
            render: (_, f) => (
              <Space>
                <Button size="small" data-testid={`trash-restore-${f.name}`} onClick={() => api('POST', '/folders/restore-from-trash-bin', { body: { id: f.id } }).then(reload, onError)}>
                  Restore
                </Button>
                <Popconfirm title={`Delete ${f.name} and its files for good?`} okText="Delete forever" onConfirm={() => api('POST', '/folders/purge', { body: { id: f.id } }).then(reload, onError)}>
                  <Button size="small" danger data-testid={`trash-purge-${f.name}`}>Delete forever</Button>
                </Popconfirm>
              </Space>
            ),
          },
        ]}
      />
    </>
  );
}

type Ask = { kind: 'create' } | { kind: 'rename'; folder: Folder } | { kind: 'share'; folder: Folder } | { kind: 'clone'; folder: Folder } | { kind: 'sftp'; folder: Folder };

/** Whose a folder is, as the Owner column says it. */
function owner(f: Folder) {
  if (f.group) return `project ${f.group}`;
  return f.is_owner ? 'you' : 'shared with you';
}

/** The Data page: folders (create, rename, delete, share, clone), the invitations waiting for
 *  you, and an explorer (list, upload with progress, download, mkdir, delete). Names are
 *  checked as typed, and what the server refuses is shown beside the field. */
export default function Data({ isAdmin = false }: { isAdmin?: boolean }) {
  const { message } = AntApp.useApp();
  const [folders, setFolders] = useState<Folder[]>([]);
  const [ask, setAsk] = useState<Ask | null>(null);
  const [open, setOpen] = useState<Folder | null>(null);
  const [usageMode, setUsageMode] = useState<UsageMode>('general');
  const load = useCallback(() => api('GET', '/folders').then(setFolders, (e) => message.error(err(e))), [message]);
  useEffect(() => {
    load();
  }, [load]);

  return (
    <>
      <Space style={{ marginBottom: 12, width: '100%', justifyContent: 'space-between' }}>
        <Typography.Title level={3} style={{ margin: 0 }}>Data</Typography.Title>
        <Button type="primary" data-testid="data-create" onClick={() => { setUsageMode('general'); setAsk({ kind: 'create' }); }}>
          + New folder
        </Button>
      </Space>
      <Invitations onAccepted={load} onError={(e) => message.error(err(e))} />
      <Table<Folder>
        rowKey="id"
        dataSource={folders.filter((f) => f.status !== 'delete-pending')}
        pagination={false}
        data-testid="folder-table"
        columns={[
          { title: 'Name', dataIndex: 'name', render: (n: string, f) => <a data-testid={`folder-${n}`} onClick={() => setOpen(f)}>{n}</a> },
          { title: 'Usage mode', dataIndex: 'usage_mode', render: (m: string, f) => <Tag color={m === 'model' ? 'purple' : undefined} data-testid={`folder-mode-${f.name}`}>{m}</Tag> },
          { title: 'Host', dataIndex: 'host' },
          { title: 'Permission', dataIndex: 'permission', render: (p: string) => <Tag>{p}</Tag> },
          { title: 'Owner', render: (_, f) => <span data-testid={`folder-owner-${f.name}`}>{owner(f)}</span> },
          { title: 'Usage', render: (_, f) => <span style={{ whiteSpace: 'nowrap' }}>{formatBytes(f.used_bytes)}{f.max_size ? ` of ${f.max_size} MiB` : ''}</span> },
          {
            title: 'Controls',
            render: (_, f) => {
              const clone = (
                <>
                  <Button size="small" data-testid={`folder-clone-${f.name}`} disabled={f.status !== 'ready'} onClick={() => setAsk({ kind: 'clone', folder: f })}>Clone</Button>
                  <Button size="small" data-testid={`folder-sftp-${f.name}`} disabled={f.status !== 'ready'} onClick={() => setAsk({ kind: 'sftp', folder: f })}>SFTP</Button>
                </>
              );
              if (!f.group && !f.is_owner) {
                return (
                  <Space>
                    {clone}
                    <Popconfirm title={`Leave ${f.name}? Its owner can invite you again.`} okText="Leave" onConfirm={() => api('POST', '/folders/{id}/leave', { path: { id: f.id }, body: {} }).then(load, (e) => message.error(err(e)))}>
                      <Button size="small" danger data-testid={`folder-leave-${f.name}`}>Leave</Button>
                    </Popconfirm>
                  </Space>
                );
              }
              return (
                <Space>
                  {(!f.group || isAdmin) && !f.name.startsWith('.') && (
                    <Button size="small" data-testid={`folder-share-${f.name}`} onClick={() => setAsk({ kind: 'share', folder: f })}>Share</Button>
                  )}
                  {clone}
                  <Button size="small" data-testid={`folder-rename-${f.name}`} onClick={() => setAsk({ kind: 'rename', folder: f })}>Rename</Button>
                  <Popconfirm title={`Move ${f.name} to the trash?`} okText="Move to trash" onConfirm={() => api('DELETE', '/folders', { body: { id: f.id } }).then(load, (e) => message.error(err(e)))}>
                    <Button size="small" danger data-testid={`folder-delete-${f.name}`}>Delete</Button>
                  </Popconfirm>
                </Space>
              );
            },
          },
        ]}
      />
      <Trash folders={folders.filter((f) => f.status === 'delete-pending')} reload={load} onError={(e) => message.error(err(e))} />
      {ask?.kind === 'create' && (
        <NameDialog
          title="Create a folder"
          placeholder="folder name"
          okText="Create"
          testId="new-folder"
          check={folderName}
          onSubmit={(name) => api('POST', '/folders', { body: { name, permission: 'rw', usage_mode: usageMode } }).then(load)}
          onClose={() => setAsk(null)}
        >
          <div style={{ marginTop: 12 }}>
            <Radio.Group value={usageMode} onChange={(e) => setUsageMode(e.target.value)} data-testid="new-folder-mode">
              {USAGE_MODES.map((m) => (
                <Radio.Button key={m.value} value={m.value}>
                  <span data-testid={`new-folder-mode-${m.value}`}>{m.label}</span>
                </Radio.Button>
              ))}
            </Radio.Group>
            <div style={{ color: '#888', fontSize: 12, marginTop: 4 }}>{USAGE_MODES.find((m) => m.value === usageMode)?.help}</div>
          </div>
        </NameDialog>
      )}
      {ask?.kind === 'rename' && (
        <NameDialog
          title={`Rename ${ask.folder.name}`}
          initial={ask.folder.name}
          okText="Rename"
          testId="rename-folder"
          check={folderName}
          onSubmit={(n) => api('POST', '/folders/{id}/rename', { path: { id: ask.folder.id }, body: { new_name: n } }).then(load)}
          onClose={() => setAsk(null)}
        />
      )}
      {ask?.kind === 'share' && <ShareDialog folder={ask.folder} onClose={() => setAsk(null)} />}
      {ask?.kind === 'sftp' && <SftpDialog folder={ask.folder} onClose={() => setAsk(null)} />}
      {ask?.kind === 'clone' && (
        <NameDialog
          title={`Clone ${ask.folder.name} into a new folder of yours`}
          initial={`${ask.folder.name}-copy`}
          okText="Clone"
          testId="clone-folder"
          check={folderName}
          onSubmit={(n) =>
            api('POST', '/folders/{id}/clone', { path: { id: ask.folder.id }, body: { target_name: n } }).then((r) => {
              load();
              followTask(new EventSource(taskStreamUrl(r.bgtask_id)), {
                onProgress: () => {},
                onEnd: (outcome, msg) => {
                  if (outcome === 'done') message.success(`${n} is ready`);
                  else message.error(`The clone ${n} failed: ${msg}`);
                  load();
                },
              });
            })
          }
          onClose={() => setAsk(null)}
        />
      )}
      {open && <FolderExplorer folder={open} onClose={() => setOpen(null)} onChanged={load} />}
    </>
  );
}
