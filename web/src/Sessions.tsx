import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { App as AntApp, Button, Popconfirm, Space, Table, Tabs, Tag, Tooltip, Typography } from 'antd';
import { AppstoreOutlined, ClockCircleOutlined, CodeOutlined, FileTextOutlined, PoweroffOutlined } from '@ant-design/icons';
import { elapsed, FINISHED_STATES, listSessions, Me, SessionItem } from './api';
import type { LaunchSettings } from './launch';
import { AppsDialog, errText, HistoryModal, LogsModal, openApp, SessionRef, STATUS_COLOR } from './dialogs';
import Detail from './Detail';
import { followSessions } from './live';
import { useTerminate } from './terminate';
import { sessionResources, shortImage, statusDetail } from './sessionRow';

/** One line of a cell: never wrapped, cut with an ellipsis (the whole text in its tooltip). */
const LINE = { whiteSpace: 'nowrap', overflow: 'hidden', textOverflow: 'ellipsis' } as const;

const GROUPS: { key: string; label: string; statuses: string[]; system?: boolean }[] = [
  // Placed and not yet ended: the server's SessionStatus::HOLDS_RESOURCES.
  { key: 'running', label: 'Running', statuses: ['SCHEDULED', 'PREPARING', 'PULLING', 'PREPARED', 'CREATING', 'RUNNING', 'RESTARTING', 'RUNNING_DEGRADED', 'PREEMPTED', 'TERMINATING'] },
  { key: 'pending', label: 'Pending', statuses: ['PENDING'] },
  { key: 'finished', label: 'Finished', statuses: FINISHED_STATES },
  // Sessions the platform made for the user (SFTP to a folder), running or ended.
  { key: 'system', label: 'System', statuses: ['PENDING', 'SCHEDULED', 'PREPARING', 'PULLING', 'PREPARED', 'CREATING', 'RUNNING', 'RESTARTING', 'RUNNING_DEGRADED', 'PREEMPTED', 'TERMINATING', ...FINISHED_STATES], system: true },
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
      // Preempted: its processes got SIGTERM and it ends (or goes back to the queue) when its
      // grace is over. The owner is told at once, with who took the room and why.
      if (type === 'session_preempted') {
        const why = String(d.reason ?? '');
        notify(`${name} was preempted${why ? `: ${why}` : ''}`, id);
        notification.warning({
          key: `preempted-${id}`,
          placement: 'bottomRight',
          message: `${name} was preempted`,
          description: (
            <span data-testid={`preempted-${name}`}>
              {why || 'another session needs its room'}. Its processes got SIGTERM: save your work now; it ends when the grace is over (a batch session started with --requeue runs again later).
            </span>
          ),
          duration: 0,
        });
      }
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
        tableLayout="fixed"
        data-testid="session-table"
        columns={[
          {
            // The name, and below it the type and environment (the full image in its tooltip).
            title: 'Name',
            render: (_, s) => (
              <>
                <div style={LINE}>
                  <a onClick={() => setDetail(s.id)} data-testid={`session-${s.name}`} title={s.name}>{s.name}</a>
                </div>
                <div style={{ ...LINE, fontSize: 12 }} title={`${s.type} · ${s.image}`}>
                  <Typography.Text type="secondary">{s.type} · {shortImage(s.image)}</Typography.Text>
                </div>
              </>
            ),
          },
          {
            // The status and its history button; below, why (a pending one's reason, an ended
            // one's cause), whole in the tooltip.
            title: 'Status',
            width: 250,
            render: (_, s) => (
              <>
                <div style={{ ...LINE, display: 'flex', alignItems: 'center', gap: 4 }}>
                  <Tooltip title={s.status_info}>
                    <Tag color={STATUS_COLOR[s.status]} data-testid={`status-${s.name}`} style={{ marginInlineEnd: 0 }}>{s.status}</Tag>
                  </Tooltip>
                  <Button size="small" type="text" title="Scheduling history" icon={<ClockCircleOutlined />} onClick={() => setDialog({ kind: 'history', s })} data-testid={`history-${s.name}`} />
                </div>
                {s.status_info && (
                  <div style={{ ...LINE, fontSize: 12 }} title={s.status_info} data-testid={`status-info-${s.name}`}>
                    {/* A preempted session ends (or is requeued) when its grace is over: said as a warning, as an idle session's end is. */}
                    <Typography.Text type={s.status === 'PREEMPTED' ? 'warning' : 'secondary'}>{statusDetail(s.status_info)}</Typography.Text>
                  </div>
                )}
              </>
            ),
          },
          {
            // What it holds (an ended one: had; a pending one: asks for), and on which agent.
            title: 'Resources',
            width: 210,
            render: (_, s) => {
              const r = sessionResources(s);
              return (
                <div title={[r.note ? `${r.text} (${r.note})` : r.text, r.where].filter(Boolean).join('\n')}>
                  <div style={LINE} data-testid={`resources-${s.name}`}>{r.text}</div>
                  {r.where && (
                    <div style={{ ...LINE, fontSize: 12 }}>
                      <Typography.Text type="secondary">{r.where}</Typography.Text>
                    </div>
                  )}
                </div>
              );
            },
          },
          { title: 'Elapsed', width: 76, render: (_, s) => <div style={LINE}>{elapsed(s.created_at, s.terminated_at)}</div> },
          ...(me.is_admin ? [{ title: 'Owner', dataIndex: 'user_email', width: 150, ellipsis: true }] : []),
          {
            // Icon buttons (named in their tooltips), Logs last as the seed's control panel has it.
            title: 'Controls',
            width: 124,
            render: (_, s) => {
              const live = s.status === 'RUNNING';
              return (
                <Space size={4} style={{ whiteSpace: 'nowrap' }}>
                  <Tooltip title="Apps">
                    <Button size="small" aria-label="Apps" icon={<AppstoreOutlined />} disabled={!live} onClick={() => setDialog({ kind: 'apps', s })} data-testid={`apps-${s.name}`} />
                  </Tooltip>
                  <Tooltip title="Terminal">
                    <Button
                      size="small"
                      aria-label="Terminal"
                      icon={<CodeOutlined />}
                      disabled={!live}
                      data-testid={`terminal-${s.name}`}
                      onClick={() => openApp(s.id, 'ttyd', { path: true }).catch((e) => message.error(errText(e)))}
                    />
                  </Tooltip>
                  {!FINISHED_STATES.includes(s.status) && <TerminateButton name={s.name} onConfirm={() => terminate({ id: s.id, name: s.name })} />}
                  <Tooltip title="Logs">
                    <Button size="small" aria-label="Logs" icon={<FileTextOutlined />} onClick={() => setDialog({ kind: 'logs', s })} data-testid={`logs-${s.name}`} />
                  </Tooltip>
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

/** The row's terminate icon and its confirmation; its tooltip is hidden while the confirmation
 *  is open, so that it never covers the confirmation's button. */
function TerminateButton({ name, onConfirm }: { name: string; onConfirm: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const [hovered, setHovered] = useState(false);
  return (
    <Popconfirm title={`Terminate ${name}?`} okText="Terminate" onConfirm={onConfirm} onOpenChange={setConfirming}>
      <Tooltip title="Terminate" open={hovered && !confirming} onOpenChange={setHovered}>
        <Button size="small" danger aria-label="Terminate session" icon={<PoweroffOutlined />} data-testid={`terminate-${name}`} />
      </Tooltip>
    </Popconfirm>
  );
}
