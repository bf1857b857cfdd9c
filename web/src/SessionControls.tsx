// The control icons of the session detail panel, in the seed's order: app launcher,
// terminal (the second), the red power button, commit (the fourth), logs (the last).
import { ReactNode, useState } from 'react';
import { App as AntApp, Button, Popconfirm, Space, Tooltip } from 'antd';
import { AppstoreOutlined, CloudUploadOutlined, CodeOutlined, FileTextOutlined, PoweroffOutlined } from '@ant-design/icons';
import { FINISHED_STATES, Schema } from './api';
import CommitDialog from './CommitDialog';
import { commitRefusal } from './validate';
import { errText, openApp, SessionRef } from './dialogs';
import { BUSY_EXPLANATION, useTerminate } from './terminate';

type Session = Schema<'SessionInfo'>;

export default function SessionControls({
  session,
  committing,
  onApps,
  onLogs,
  onChanged,
}: {
  session: Session;
  /** A conversion to an image runs now. */
  committing: boolean;
  onApps: (s: SessionRef) => void;
  onLogs: (s: SessionRef) => void;
  /** Something changed the session (terminated, a conversion ended). */
  onChanged: () => void;
}) {
  const { message } = AntApp.useApp();
  const [commit, setCommit] = useState(false);
  const terminate = useTerminate(onChanged);
  const ref = { id: session.id, name: session.name };
  const live = session.status === 'RUNNING';
  const refusal = commitRefusal(session);
  const icon = (title: string, testId: string, node: ReactNode, onClick?: () => void, disabled = false) => (
    <Tooltip title={title}>
      <Button type="text" icon={node} aria-label={title} disabled={disabled} onClick={onClick} data-testid={testId} />
    </Tooltip>
  );
  return (
    <Space size={0} data-testid="detail-controls">
      {icon('Apps', 'detail-apps', <AppstoreOutlined />, () => onApps(ref), !live)}
      {icon('Terminal', 'detail-terminal', <CodeOutlined />, () => openApp(session.id, 'ttyd', { path: true }).catch((e) => message.error(errText(e))), !live)}
      {!FINISHED_STATES.includes(session.status) && (
        <Popconfirm
          title={committing ? `${session.name} is being converted to an image` : `Terminate ${session.name}?`}
          description={committing ? <div style={{ maxWidth: 320 }}>{BUSY_EXPLANATION}</div> : undefined}
          okText={committing ? 'Force terminate' : 'Terminate'}
          okButtonProps={{ danger: true }}
          onConfirm={() => terminate(ref, committing)}
        >
          <Tooltip title="Terminate">
            <Button type="text" danger icon={<PoweroffOutlined />} aria-label="Terminate" data-testid="detail-terminate" />
          </Tooltip>
        </Popconfirm>
      )}
      {icon(refusal ? `Commit: ${refusal}` : 'Commit (convert the session to an image)', 'detail-commit', <CloudUploadOutlined />, () => setCommit(true), !!refusal && !committing)}
      {icon('Logs', 'detail-logs', <FileTextOutlined />, () => onLogs(ref))}
      {commit && (
        <CommitDialog
          session={session}
          onClose={() => {
            setCommit(false);
            onChanged();
          }}
        />
      )}
    </Space>
  );
}
