// The explorer of a data folder's files: into sub-folders and up, upload with progress, download,
// new directory and delete (disabled on a read-only folder), and a model folder's definition
// checked as its files change. The Data page and the launcher's Data & Storage page both open it.
import { useCallback, useEffect, useState } from 'react';
import { Alert, App as AntApp, Button, Modal, Popconfirm, Progress, Space, Table, Upload } from 'antd';
import { api, ApiError, formatBytes, formatTime, problem, Schema } from './api';
import NameDialog from './NameDialog';
import { checkDefinition, definitionProblem, describeDefinition } from './serving';
import { entryName } from './validate';

type Folder = Schema<'Folder'>;
type FileEntry = Schema<'FileEntry'>;

function err(e: unknown) {
  return e instanceof ApiError ? e.message : String(e);
}

/** Uploads a file into a folder: `request-upload`, then one TUS `PATCH` with progress. */
export async function uploadFile(folderId: string, path: string, file: File, onProgress: (pct: number) => void) {
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

/** The explorer of `folder`, from its top; `onChanged` hears of uploads and deletions. */
export default function FolderExplorer({ folder, onClose, onChanged }: { folder: Folder; onClose: () => void; onChanged?: () => void }) {
  const { message } = AntApp.useApp();
  const open = folder;
  const [path, setPath] = useState('');
  const [items, setItems] = useState<FileEntry[]>([]);
  const [progress, setProgress] = useState<number | null>(null);
  const [uploadError, setUploadError] = useState<string | null>(null);
  const [mkdir, setMkdir] = useState(false);
  // A model folder's definition, checked when the folder is opened and after its files change.
  const [definition, setDefinition] = useState<{ ok?: string; problem?: string } | null>(null);
  const list = useCallback(
    (f: Folder, p: string) =>
      api('GET', '/folders/{id}/files', { path: { id: f.id }, query: { path: p } }).then((r) => setItems(r.items), (e) => message.error(err(e))),
    [message],
  );
  useEffect(() => {
    list(open, path);
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
    checkModel(open);
  }, [open, checkModel]);
  const join = (n: string) => (path ? `${path}/${n}` : n);

  // The files chosen together, one after another; then the list, and a model folder's
  // definition checked again.
  const upload = async (files: File[]) => {
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
    onChanged?.();
  };
  const download = async (n: string) => {
    const r = await api('POST', '/folders/{id}/request-download', { path: { id: open.id }, body: { path: join(n) } });
    window.open(`/storage/download?token=${encodeURIComponent(r.token)}`, '_blank');
  };
  const remove = (n: string) => {
    api('DELETE', '/folders/{id}/delete-files', { path: { id: open.id }, body: { files: [join(n)], recursive: true } }).then(
      () => {
        list(open, path);
        checkModel(open);
        onChanged?.();
      },
      (e) => message.error(err(e)),
    );
  };

  return (
    <>
      {mkdir && (
        <NameDialog
          title={`New directory in ${open.name}/${path}`}
          okText="Create"
          testId="mkdir"
          check={entryName}
          onSubmit={(n) => api('POST', '/folders/{id}/mkdir', { path: { id: open.id }, body: { path: [join(n)], parents: true, exist_ok: false } }).then(() => list(open, path))}
          onClose={() => setMkdir(false)}
        />
      )}
      <Modal open width={800} title={`${open?.name ?? ''}/${path}${open?.usage_mode === 'model' ? ' (model folder)' : ''}`} onCancel={onClose} footer={null}>
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
          <Button data-testid="explorer-mkdir" disabled={open?.permission === 'ro'} onClick={() => setMkdir(true)}>New directory</Button>
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
