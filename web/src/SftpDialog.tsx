// SFTP to a data folder: the platform starts a system session with the folder mounted and only
// sshd; this shows where to connect and offers the key made for it (shown once: it is not kept
// in the page). The session ends by itself when no connection is open for a while.
import { useEffect, useState } from 'react';
import { Alert, Button, Descriptions, Modal, Spin, Typography } from 'antd';
import { api, ApiError, Schema } from './api';

type Access = Schema<'SftpAccess'>;

/** Offers `text` as a file download named `name`. */
function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/octet-stream' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  URL.revokeObjectURL(url);
}

export default function SftpDialog({ folder, onClose }: { folder: { id: string; name: string }; onClose: () => void }) {
  const [access, setAccess] = useState<Access | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api('POST', '/folders/{id}/sftp', { path: { id: folder.id } }).then(setAccess, (e) => setError(e instanceof ApiError ? e.message : String(e)));
  }, [folder.id]);
  const keyName = `sftp-${folder.name}.key`;
  return (
    <Modal open title={`SFTP to ${folder.name}`} onCancel={onClose} footer={<Button onClick={onClose}>Close</Button>} width={640}>
      {!access && !error && (
        <div style={{ textAlign: 'center', padding: 24 }} data-testid="sftp-starting">
          <Spin /> <div>Starting an SFTP session for this folder…</div>
        </div>
      )}
      {error && <Alert type="error" showIcon message={error} data-testid="sftp-error" />}
      {access && (
        <>
          <Descriptions size="small" column={1} bordered data-testid="sftp-access">
            <Descriptions.Item label="Host">
              <span data-testid="sftp-host">{access.host}</span>
            </Descriptions.Item>
            <Descriptions.Item label="Port">
              <span data-testid="sftp-port">{access.port}</span>
            </Descriptions.Item>
            <Descriptions.Item label="User">
              <span data-testid="sftp-user">{access.user}</span>
            </Descriptions.Item>
            <Descriptions.Item label="Folder">{access.path}</Descriptions.Item>
            <Descriptions.Item label="Session">{access.session_name} (under the System tab of Sessions)</Descriptions.Item>
          </Descriptions>
          <Typography.Paragraph style={{ marginTop: 12 }}>
            <Button type="primary" onClick={() => download(keyName, access.private_key)} data-testid="sftp-key">
              Download the key
            </Button>{' '}
            It opens this session only and is shown once. Keep it private (<code>chmod 600 {keyName}</code>).
          </Typography.Paragraph>
          <Typography.Paragraph copyable={{ text: `sftp -i ${keyName} -P ${access.port} ${access.user}@${access.host}` }} data-testid="sftp-command">
            <code>
              sftp -i {keyName} -P {access.port} {access.user}@{access.host}
            </code>
          </Typography.Paragraph>
          <Typography.Text type="secondary">The session ends by itself when no connection has been open for a while.</Typography.Text>
        </>
      )}
    </Modal>
  );
}
