import { useCallback, useEffect, useState } from 'react';
import { Alert, App as AntApp, Button, Modal, Popconfirm, Progress, Radio, Space, Table, Tag, Typography, Upload } from 'antd';
import { api, ApiError, formatBytes, formatTime, problem, Schema } from './api';
import NameDialog from './NameDialog';
import { Invitations, ShareDialog } from './Sharing';
import { followTask, taskStreamUrl } from './bgtask';
import { checkDefinition, definitionProblem, describeDefinition } from './serving';
import { entryName, folderName } from './validate';

type Folder = Schema<'Folder'>;
type FileEntry = Schema<'FileEntry'>;
type UsageMode = Schema<'UsageMode'>;

const USAGE_MODES: { value: UsageMode; label: string; help: string }[] = [
  { value: 'general', label: 'General', help: 'Plain data, mounted into sessions.' },
  { value: 'model', label: 'Model', help: 'A model store with a model-definition.yaml: it can be served (Serving page).' },
  { value: 'data', label: 'Data', help: 'A dataset.' },
];

function err(e: unknown) {
  return e instanceof ApiError ? e.message : String(e);
}

/** Uploads a file into a folder: `request-upload`, then one TUS `PATCH` with progress. */
async function uploadFile(folderId: string, path: string, file: File, onProgress: (pct: number) => void) {
  const r = await api('POST', '/folders/{id}/request-upload', { path: { id: folderId }, body: { path, size: file.size } });
  const url = `/storage/upload?token=${encodeURIComponent(r.token)}`;
  await new Promise<void>((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open('PATCH', url);
    x.setRequestHeader('Tus-Resumable', '1.0.0');
    x.setRequestHeader('Upload-Offset', '0');
    x.setRequestHeader('Content-Type', 'application/offset+octet-stream');
    x.upload.onprogress = (e) => onProgress(Math.round((100 * e.loaded) / Math.max(1, e.total)));
    x.onload = () => {
      if (x.status < 300) return resolve();
      let msg = x.statusText;
      try {
        msg = problem(JSON.parse(x.responseText || '{}')).msg ?? msg;
      } catch {
        /* not JSON */
      }
      reject(new Error(msg));
    };
    x.onerror = () => reject(new Error('the upload failed: the connection broke'));
    x.send(file);
  });
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

type Ask = { kind: 'create' } | { kind: 'rename'; folder: Folder } | { kind: 'mkdir' } | { kind: 'share'; folder: Folder } | { kind: 'clone'; folder: Folder };

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
  const [path, setPath] = useState('');
  const [items, setItems] = useState<FileEntry[]>([]);
  const [progress, setProgress] = useState<number | null>(null);
  const [uploadError, setUploadError] = useState<string | null>(null);
  const [usageMode, setUsageMode] = useState<UsageMode>('general');
  // A model folder's definition, checked when the folder is opened and after its files change.
  const [definition, setDefinition] = useState<{ ok?: string; problem?: string } | null>(null);
  const load = useCallback(() => api('GET', '/folders').then(setFolders, (e) => message.error(err(e))), [message]);
  useEffect(() => {
    load();
  }, [load]);
  const list = useCallback(
    (f: Folder, p: string) =>
      api('GET', '/folders/{id}/files', { path: { id: f.id }, query: { path: p } }).then((r) => setItems(r.items), (e) => message.error(err(e))),
    [message],
  );
  useEffect(() => {
    if (open) list(open, path);
  }, [open, path, list]);
  const checkModel = useCallback((f: Folder) => {
    if (f.usage_mode !== 'model') return setDefinition(null);
    checkDefinition(f.id).then(
      (c) => setDefinition({ ok: describeDefinition(c) }),
      (e) => {
        const p = definitionProblem(e);
        setDefinition(p ? { problem: p } : null);
      },
    );
  }, []);
  useEffect(() => {
    if (open) checkModel(open);
    else setDefinition(null);
  }, [open, checkModel]);
  const join = (n: string) => (path ? `${path}/${n}` : n);

  // The files chosen together, one after another; then the list, and a model folder's
  // definition checked again.
  const upload = async (files: File[]) => {
    if (!open) return;
    setUploadError(null);
    const failed: string[] = [];
    for (const file of files) {
      setProgress(0);
      try {
        await uploadFile(open.id, join(file.name), file, setProgress);
      } catch (e) {
        failed.push(`${file.name}: ${err(e)}`);
      }
    }
    setProgress(null);
    if (failed.length) setUploadError(failed.join('; '));
    else message.success(files.length === 1 ? `${files[0].name} uploaded` : `${files.length} files uploaded`);
    list(open, path);
    checkModel(open);
  };
  const download = async (n: string) => {
    if (!open) return;
    const r = await api('POST', '/folders/{id}/request-download', { path: { id: open.id }, body: { path: join(n) } });
    window.open(`/storage/download?token=${encodeURIComponent(r.token)}`, '_blank');
  };
  const remove = (n: string) => {
    if (!open) return;
    api('DELETE', '/folders/{id}/delete-files', { path: { id: open.id }, body: { files: [join(n)], recursive: true } }).then(
      () => {
        list(open, path);
        checkModel(open);
      },
      (e) => message.error(err(e)),
    );
  };

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
          { title: 'Name', dataIndex: 'name', render: (n: string, f) => <a data-testid={`folder-${n}`} onClick={() => { setOpen(f); setPath(''); setUploadError(null); }}>{n}</a> },
          { title: 'Usage mode', dataIndex: 'usage_mode', render: (m: string, f) => <Tag color={m === 'model' ? 'purple' : undefined} data-testid={`folder-mode-${f.name}`}>{m}</Tag> },
          { title: 'Host', dataIndex: 'host' },
          { title: 'Permission', dataIndex: 'permission', render: (p: string) => <Tag>{p}</Tag> },
          { title: 'Owner', render: (_, f) => <span data-testid={`folder-owner-${f.name}`}>{owner(f)}</span> },
          { title: 'Usage', render: (_, f) => `${formatBytes(f.used_bytes)}${f.max_size ? ` of ${f.max_size} MiB` : ''}` },
          {
            title: 'Controls',
            render: (_, f) => {
              const clone = (
                <Button size="small" data-testid={`folder-clone-${f.name}`} disabled={f.status !== 'ready'} onClick={() => setAsk({ kind: 'clone', folder: f })}>Clone</Button>
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
      {ask?.kind === 'mkdir' && open && (
        <NameDialog
          title={`New directory in ${open.name}/${path}`}
          okText="Create"
          testId="mkdir"
          check={entryName}
          onSubmit={(n) => api('POST', '/folders/{id}/mkdir', { path: { id: open.id }, body: { path: [join(n)], parents: true, exist_ok: false } }).then(() => list(open, path))}
          onClose={() => setAsk(null)}
        />
      )}
      <Modal open={!!open} width={800} title={`${open?.name ?? ''}/${path}${open?.usage_mode === 'model' ? ' (model folder)' : ''}`} onCancel={() => setOpen(null)} footer={null}>
        <Space style={{ marginBottom: 12 }} wrap>
          <Button disabled={!path} onClick={() => setPath(path.split('/').slice(0, -1).join('/'))}>Up</Button>
          <Upload
            multiple
            showUploadList={false}
            beforeUpload={(f, all) => {
              // Called once per file with all of them: the first starts the lot.
              if (f.uid === all[0]?.uid) upload(all);
              return false;
            }}
          >
            <Button data-testid="explorer-upload" disabled={open?.permission === 'ro'}>Upload</Button>
          </Upload>
          <Button data-testid="explorer-mkdir" disabled={open?.permission === 'ro'} onClick={() => setAsk({ kind: 'mkdir' })}>New directory</Button>
          {progress !== null && <Progress percent={progress} style={{ width: 200 }} data-testid="upload-progress" />}
        </Space>
        {uploadError && <div style={{ color: '#cf1322', marginBottom: 8 }} data-testid="upload-error">{uploadError}</div>}
        {definition && (
          <Alert
            type={definition.ok ? 'success' : 'error'}
            showIcon
            style={{ marginBottom: 8 }}
            data-testid="definition-check"
            message={definition.ok ? 'The model definition is valid' : 'This model folder cannot be served yet'}
            description={<span data-testid={definition.ok ? 'definition-ok' : 'definition-problem'}>{definition.ok ?? definition.problem}</span>}
          />
        )}
        <Table<FileEntry>
          size="small"
          rowKey="name"
          pagination={false}
          dataSource={items}
          data-testid="explorer-table"
          columns={[
            { title: 'Name', dataIndex: 'name', render: (n: string, i) => (i.type === 'DIRECTORY' ? <a data-testid={`entry-${n}`} onClick={() => setPath(join(n))}>📁 {n}</a> : <span data-testid={`entry-${n}`}>📄 {n}</span>) },
            { title: 'Size', dataIndex: 'size', render: (n: number, i) => (i.type === 'DIRECTORY' ? '-' : formatBytes(n)) },
            { title: 'Modified', dataIndex: 'modified', render: formatTime },
            {
              title: '',
              render: (_, i) => (
                <Space>
                  {i.type !== 'DIRECTORY' && <Button size="small" data-testid={`download-${i.name}`} onClick={() => download(i.name).catch((e) => message.error(err(e)))}>Download</Button>}
                  <Popconfirm title={`Delete ${i.name}?`} okText="Delete" onConfirm={() => remove(i.name)}>
                    <Button size="small" danger data-testid={`delete-${i.name}`} disabled={open?.permission === 'ro'}>Delete</Button>
                  </Popconfirm>
                </Space>
              ),
            },
          ]}
        />
      </Modal>
    </>
  );
}
