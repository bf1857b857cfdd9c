import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { App as AntApp, Button, Popconfirm, Space, Table, Tabs, Tag, Tooltip, Typography } from 'antd';
import { ClockCircleOutlined } from '@ant-design/icons';
import { elapsed, FINISHED_STATES, formatSlots, listSessions, Me, SessionItem } from './api';
import type { LaunchSettings } from './launch';
import { AppsDialog, errText, HistoryModal, LogsModal, openApp, SessionRef, STATUS_COLOR } from './dialogs';
import Detail from './Detail';
import { followSessions } from './live';
import { useTerminate } from './terminate';

const GROUPS: { key: string; label: string; statuses: string[]; system?: boolean }[] = [
  // Placed and not yet ended: the server's SessionStatus::HOLDS_RESOURCES.
  { key: 'running', label: 'Running', statuses: ['SCHEDULED', 'PREPARING', 'PULLING', 'PREPARED', 'CREATING', 'RUNNING', 'RESTARTING', 'RUNNING_DEGRADED', 'TERMINATING'] },
  { key: 'pending', label: 'Pending', statuses: ['PENDING'] },
  { key: 'finished', label: 'Finished', statuses: FINISHED_STATES },
  // Sessions the platform made for the user (SFTP to a folder), running or ended.
  { key: 'system', label: 'System', statuses: ['PENDING', 'SCHEDULED', 'PREPARING', 'PULLING', 'PREPARED', 'CREATING', 'RUNNING', 'RESTARTING', 'RUNNING_DEGRADED', 'TERMINATING', ...FINISHED_STATES], system: true },
];

export default function Sessions({ me, notify, onStart }: { me: Me; notify: (t: string, id?: string) => void; onStart: (s: LaunchSettings | null) => void }) {
  const { message, notification } = AntApp.useApp();
  const [tab, setTab] = useState('running');
  const [items, setItems] = useState<SessionItem[]>([]);
  const [loading, setLoading] = useState(false);
  const [dialog, setDialog] = useState<{ kind: 'apps' | 'logs' | 'history'; s: SessionRef; kernelId?: string } | null>(null);
  const [detail, setDetail] = useState<string | null>(null);
  const [, tick] = useState(0);
  const group = useMemo(() => GROUPS.find((g) => g.key === tab)!, [tab]);
  // Only the newest request may fill the table: a slower answer for a tab the user already
  // left (or an older refresh) must not overwrite the newer one.
  const seq = useRef(0);
  const refresh = useCallback(() => {
    const mine = ++seq.current;
    setLoading(true);
    listSessions(group.statuses, group.system)
      .then(
        (rows) => mine === seq.current && setItems(rows),
        (e) => mine === seq.current && message.error(errText(e)),
      )
      .finally(() => mine === seq.current && setLoading(false));
  }, [group, message]);
  useEffect(refresh, [refresh]);
  // The stream outlives tab switches and always calls the newest `refresh` (see live.ts).
  const latest = useRef(refresh);
  latest.current = refresh;
  // Refused while the session is converted to an image: the user is then offered a forced one.
  const terminate = useTerminate();
  const terminateRef = useRef(terminate);
  terminateRef.current = terminate;
  // Live updates: every lifecycle event of a visible session refreshes the list.
  useEffect(() => {
    const onEvent = (type: string, d: Record<string, unknown>) => {
      const id = String(d.sessionId ?? '');
      const name = String(d.sessionName ?? '');
      if (type === 'session_started') {
        notify(`${name} is running`, id);
        const item: SessionRef = { id, name };
        const key = `session-${id}`;
        notification.open({
          key,
          placement: 'bottomRight',
          message: name,
          description: <Tag color="green">RUNNING</Tag>,
          btn: (
            <Space>
              <Button size="small" onClick={() => setDialog({ kind: 'apps', s: item })}>Apps</Button>
              <Button size="small" onClick={() => openApp(id, 'ttyd', { path: true }).catch((e) => message.error(errText(e)))}>Terminal</Button>
              <Button size="small" onClick={() => setDialog({ kind: 'logs', s: item })}>Logs</Button>
              <Button size="small" danger onClick={() => { notification.destroy(key); terminateRef.current(item); }}>Terminate</Button>
            </Space>
          ),
        });
      }
      if (type === 'session_terminated') notify(`${name} terminated`, id);
    };
    const stop = followSessions(new EventSource('/events/session?sessionName=*&scope=session'), {
      refresh: () => latest.current,
      onEvent,
    });
    const t = window.setInterval(() => tick((n) => n + 1), 1000);
    return () => {
      stop();
      window.clearInterval(t);
    };
  }, [notify, notification, message]);


  return (
    <>
      <Space style={{ marginBottom: 12, width: '100%', justifyContent: 'space-between' }}>
        <Typography.Title level={3} style={{ margin: 0 }}>Sessions</Typography.Title>
        <Button type="primary" size="large" onClick={() => onStart(null)} data-testid="start">START</Button>
      </Space>
      <Tabs activeKey={tab} onChange={setTab} items={GROUPS.map((g) => ({ key: g.key, label: <span data-testid={`tab-${g.key}`}>{g.label}</span> }))} />
      <Table<SessionItem>
        rowKey="id"
        loading={loading}
        dataSource={items}
        size="middle"
        data-testid="session-table"
        columns={[
          {
            title: 'Name',
            dataIndex: 'name',
            render: (n: string, s) => <a onClick={() => setDetail(s.id)} data-testid={`session-${n}`}>{n}</a>,
          },
          {
            title: 'Status',
            render: (_, s) => (
              <Space>
                <Tooltip title={s.status_info}>
                  <Tag color={STATUS_COLOR[s.status]} data-testid={`status-${s.name}`}>{s.status}</Tag>
                </Tooltip>
                <Button size="small" type="text" title="Scheduling history" icon={<ClockCircleOutlined />} onClick={() => setDialog({ kind: 'history', s })} data-testid={`history-${s.name}`} />
                {s.status_info && <Typography.Text type="secondary">{s.status_info}</Typography.Text>}
              </Space>
            ),
          },
          { title: 'Type', dataIndex: 'type' },
          { title: 'Environment', dataIndex: 'image' },
          { title: 'Resources', render: (_, s) => formatSlots(s.occupying_slots) },
          { title: 'Elapsed', render: (_, s) => elapsed(s.created_at, s.terminated_at) },
          { title: 'Agent', dataIndex: 'agent', render: (a) => a ?? '-' },
          ...(me.is_admin ? [{ title: 'Owner', dataIndex: 'user_email' }] : []),
          {
            title: 'Controls',
            render: (_, s) => {
              const live = s.status === 'RUNNING';
              return (
                <Space>
                  <Button size="small" disabled={!live} onClick={() => setDialog({ kind: 'apps', s })} data-testid={`apps-${s.name}`}>Apps</Button>
                  <Button
                    size="small"
                    disabled={!live}
                    data-testid={`terminal-${s.name}`}
                    onClick={() => openApp(s.id, 'ttyd', { path: true }).catch((e) => message.error(errText(e)))}
                  >
                    Terminal
                  </Button>
                  {!FINISHED_STATES.includes(s.status) && (
                    <Popconfirm title={`Terminate ${s.name}?`} okText="Terminate" onConfirm={() => terminate({ id: s.id, name: s.name })}>
                      <Button size="small" danger data-testid={`terminate-${s.name}`}>Terminate</Button>
                    </Popconfirm>
                  )}
                  {/* Logs last, as the seed's control panel has it. */}
                  <Button size="small" onClick={() => setDialog({ kind: 'logs', s })} data-testid={`logs-${s.name}`}>Logs</Button>
                </Space>
              );
            },
          },
        ]}
      />
      {dialog?.kind === 'apps' && <AppsDialog session={dialog.s} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'logs' && <LogsModal session={dialog.s} kernelId={dialog.kernelId} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'history' && <HistoryModal session={dialog.s} onClose={() => setDialog(null)} />}
      {detail && (
        <Detail
          id={detail}
          onClose={() => setDetail(null)}
          onRenamed={refresh}
          onLogs={(s, kernelId) => setDialog({ kind: 'logs', s, kernelId })}
          onHistory={(s) => setDialog({ kind: 'history', s })}
          onApps={(s) => setDialog({ kind: 'apps', s })}
        />
      )}
    </>
  );
}
