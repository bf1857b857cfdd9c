import { useCallback, useEffect, useState } from 'react';
import { App as AntApp, Button, Input, Modal, Popconfirm, Progress, Space, Table, Typography, Upload } from 'antd';
import { api, ApiError } from './api';

function err(e: unknown) {
  return e instanceof ApiError ? e.message : String(e);
}

/** The Data page: folders (create, rename, delete) and an explorer (list, upload with
 *  progress, download, mkdir, delete). */
export default function Data() {
  const { message } = AntApp.useApp();
  const [folders, setFolders] = useState<any[]>([]);
  const [name, setName] = useState('');
  const [open, setOpen] = useState<any | null>(null);
  const [path, setPath] = useState('');
  const [items, setItems] = useState<any[]>([]);
  const [progress, setProgress] = useState<number | null>(null);
  const load = useCallback(() => api<any[]>('GET', '/folders').then(setFolders, (e) => message.error(err(e))), [message]);
  useEffect(() => {
    load();
  }, [load]);
  const list = useCallback(
    (f: any, p: string) => api('GET', `/folders/${f.id}/files?path=${encodeURIComponent(p)}`).then((r) => setItems(r.items ?? []), (e) => message.error(err(e))),
    [message],
  );
  useEffect(() => {
    if (open) list(open, path);
  }, [open, path, list]);
  const join = (n: string) => (path ? `${path}/${n}` : n);

  const upload = async (file: File) => {
    try {
      const r = await api('POST', `/folders/${open.id}/request-upload`, { path: join(file.name), size: file.size });
      const url = `/storage/upload?token=${encodeURIComponent(r.token)}`;
      await new Promise<void>((resolve, reject) => {
        const x = new XMLHttpRequest();
        x.open('PATCH', url);
        x.setRequestHeader('Tus-Resumable', '1.0.0');
        x.setRequestHeader('Upload-Offset', '0');
        x.setRequestHeader('Content-Type', 'application/offset+octet-stream');
        x.upload.onprogress = (e) => setProgress(Math.round((100 * e.loaded) / Math.max(1, e.total)));
        x.onload = () => (x.status < 300 ? resolve() : reject(new Error(JSON.parse(x.responseText || '{}').msg ?? x.statusText)));
        x.onerror = () => reject(new Error('the upload failed'));
        x.send(file);
      });
      message.success(`${file.name} uploaded`);
      list(open, path);
    } catch (e) {
      message.error(err(e));
    } finally {
      setProgress(null);
    }
  };
  const download = async (n: string) => {
    const r = await api('POST', `/folders/${open.id}/request-download`, { path: join(n) });
    window.open(`/storage/download?token=${encodeURIComponent(r.token)}`, '_blank');
  };

  return (
    <>
      <Typography.Title level={3}>Data</Typography.Title>
      <Space style={{ marginBottom: 12 }}>
        <Input placeholder="new folder name" value={name} onChange={(e) => setName(e.target.value)} data-testid="data-new-folder" />
        <Button
          type="primary"
          data-testid="data-create"
          onClick={() => api('POST', '/folders', { name, permission: 'rw' }).then(() => { setName(''); load(); }, (e) => message.error(err(e)))}
        >
          Create
        </Button>
      </Space>
      <Table
        rowKey="id"
        dataSource={folders}
        pagination={false}
        columns={[
          { title: 'Name', dataIndex: 'name', render: (n: string, f: any) => <a onClick={() => { setOpen(f); setPath(''); }}>{n}</a> },
          { title: 'Host', dataIndex: 'host' },
          { title: 'Permission', dataIndex: 'permission' },
          { title: 'Owner', render: (_: unknown, f: any) => (f.group ? `project ${f.group}` : 'you') },
          {
            title: 'Controls',
            render: (_: unknown, f: any) => (
              <Space>
                <Button size="small" onClick={() => { const n = window.prompt('New name', f.name); if (n) api('POST', `/folders/${f.id}/rename`, { new_name: n }).then(load, (e) => message.error(err(e))); }}>Rename</Button>
                <Popconfirm title={`Delete ${f.name} and its files?`} onConfirm={() => api('DELETE', '/folders', { id: f.id }).then(load, (e) => message.error(err(e)))}>
                  <Button size="small" danger>Delete</Button>
                </Popconfirm>
              </Space>
            ),
          },
        ]}
      />
      <Modal open={!!open} width={800} title={`${open?.name ?? ''}/${path}`} onCancel={() => setOpen(null)} footer={null}>
        <Space style={{ marginBottom: 12 }}>
          <Button disabled={!path} onClick={() => setPath(path.split('/').slice(0, -1).join('/'))}>Up</Button>
          <Upload showUploadList={false} beforeUpload={(f) => { upload(f as unknown as File); return false; }}>
            <Button>Upload</Button>
          </Upload>
          <Button onClick={() => { const n = window.prompt('Folder name'); if (n) api('POST', `/folders/${open.id}/mkdir`, { path: [join(n)], parents: true, exist_ok: true }).then(() => list(open, path), (e) => message.error(err(e))); }}>New directory</Button>
          {progress !== null && <Progress percent={progress} style={{ width: 200 }} />}
        </Space>
        <Table
          size="small"
          rowKey="name"
          pagination={false}
          dataSource={items}
          columns={[
            { title: 'Name', dataIndex: 'name', render: (n: string, i: any) => (i.type === 'DIRECTORY' ? <a onClick={() => setPath(join(n))}>📁 {n}</a> : <span>📄 {n}</span>) },
            { title: 'Size', dataIndex: 'size' },
            { title: 'Modified', dataIndex: 'modified' },
            {
              title: '',
              render: (_: unknown, i: any) => (
                <Space>
                  {i.type !== 'DIRECTORY' && <Button size="small" onClick={() => download(i.name).catch((e) => message.error(err(e)))}>Download</Button>}
                  <Popconfirm title={`Delete ${i.name}?`} onConfirm={() => api('DELETE', `/folders/${open.id}/delete-files`, { files: [join(i.name)], recursive: true }).then(() => list(open, path), (e) => message.error(err(e)))}>
                    <Button size="small" danger>Delete</Button>
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
