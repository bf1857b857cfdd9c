import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import {
  App as AntApp, Badge, Button, Checkbox, Descriptions, Drawer, Form, Input, List, Modal, Popconfirm, Select,
  Space, Table, Tabs, Tag, Tooltip, Typography,
} from 'antd';
import { ClockCircleOutlined } from '@ant-design/icons';
import { api, ApiError, elapsed, FINISHED_STATES, formatSlots, listSessions, Me, SessionItem } from './api';
import type { LaunchSettings } from './Launcher';

const STATUS_COLOR: Record<string, string> = {
  PENDING: 'gold', SCHEDULED: 'cyan', PREPARING: 'blue', PULLING: 'blue', PREPARED: 'blue', CREATING: 'blue',
  RUNNING: 'green', TERMINATING: 'orange', TERMINATED: 'default', CANCELLED: 'default', ERROR: 'red',
};
// Result badge colours of the Scheduling History table (seed 000).
const RESULT_COLOR: Record<string, string> = {
  SUCCESS: 'green', FAILURE: 'red', NEED_RETRY: 'gold', EXPIRED: 'default', GIVE_UP: 'volcano', SKIPPED: 'default',
};

const GROUPS: { key: string; label: string; statuses: string[] }[] = [
  { key: 'running', label: 'Running', statuses: ['SCHEDULED', 'PREPARING', 'PULLING', 'PREPARED', 'CREATING', 'RUNNING', 'RESTARTING', 'TERMINATING'] },
  { key: 'pending', label: 'Pending', statuses: ['PENDING'] },
  { key: 'finished', label: 'Finished', statuses: FINISHED_STATES },
];

function errText(e: unknown) {
  return e instanceof ApiError ? e.message : String(e);
}

/** Opens an app through the app proxy in a new tab. The tab is opened at once, while the
 *  click still counts as the user's (starting an app such as Jupyter takes seconds, and a
 *  later window.open would be blocked), then sent to the app's URL. */
async function openApp(session: string, app: string, opts: { public?: boolean; port?: number; path?: boolean } = {}) {
  const tab = window.open('about:blank', '_blank');
  try {
    const r = await api<{ url: string }>('POST', `/session/${encodeURIComponent(session)}/start-service`, {
      app,
      mode: opts.path ? 'path' : 'port',
      port: opts.port ?? null,
      open_to_public: !!opts.public,
    });
    if (tab) tab.location.href = r.url;
    else window.open(r.url, '_blank');
    return r.url;
  } catch (e) {
    tab?.close();
    throw e;
  }
}

function AppsDialog({ session, onClose }: { session: SessionItem; onClose: () => void }) {
  const { message } = AntApp.useApp();
  const [apps, setApps] = useState<{ name: string; protocol: string; ports: number[] }[]>([]);
  const [publicApp, setPublic] = useState(false);
  const [tryPort, setTryPort] = useState(false);
  const [port, setPort] = useState<string>('');
  useEffect(() => {
    api<any[]>('GET', `/stream/session/${session.id}/apps`).then(setApps, (e) => message.error(errText(e)));
  }, [session.id, message]);
  return (
    <Modal open title={`Apps of ${session.name}`} onCancel={onClose} footer={null}>
      <List
        dataSource={apps}
        renderItem={(a) => (
          <List.Item
            actions={[
              a.protocol === 'tcp' ? (
                <Typography.Text type="secondary" key="t">bai app {session.name} {a.name} -b PORT</Typography.Text>
              ) : (
                <Button
                  key="o"
                  data-testid={`open-app-${a.name}`}
                  onClick={() =>
                    openApp(session.id, a.name, { public: publicApp, port: tryPort && port ? Number(port) : undefined }).catch(
                      (e) => message.error(errText(e)),
                    )
                  }
                >
                  Open
                </Button>
              ),
            ]}
          >
            <List.Item.Meta title={a.name} description={`${a.protocol}, container port ${a.ports.join(',')}`} />
          </List.Item>
        )}
      />
      <Space direction="vertical">
        <Checkbox checked={publicApp} onChange={(e) => setPublic(e.target.checked)}>
          Open app to public
        </Checkbox>
        <Space>
          <Checkbox checked={tryPort} onChange={(e) => setTryPort(e.target.checked)}>
            Try preferred port
          </Checkbox>
          <Input style={{ width: 120 }} disabled={!tryPort} value={port} onChange={(e) => setPort(e.target.value)} placeholder="30000" />
        </Space>
      </Space>
    </Modal>
  );
}

function LogsModal({ session, onClose }: { session: SessionItem; onClose: () => void }) {
  const [text, setText] = useState('Loading…');
  const load = useCallback(() => {
    api<{ result: { logs: string } }>('GET', `/session/${session.id}/logs`).then(
      (r) => setText(r.result.logs || '(no output yet)'),
      (e) => setText(errText(e)),
    );
  }, [session.id]);
  useEffect(load, [load]);
  return (
    <Modal open width={900} title={`Logs of ${session.name}`} onCancel={onClose} footer={<Button onClick={load}>Refresh</Button>}>
      <pre data-testid="logs" style={{ maxHeight: 500, overflow: 'auto', background: '#111', color: '#eee', padding: 12 }}>{text}</pre>
    </Modal>
  );
}

interface HistoryRecord {
  id: string;
  phase: string;
  result: string;
  from_status: string | null;
  to_status: string | null;
  attempts: number;
  message: string;
  error_code: string | null;
  created_at: string;
  updated_at: string;
  sub_steps?: { step: string; result: string; message: string }[];
}

function HistoryModal({ session, onClose }: { session: SessionItem; onClose: () => void }) {
  const [rows, setRows] = useState<HistoryRecord[]>([]);
  const [filter, setFilter] = useState<Record<string, string>>({});
  const load = useCallback(() => {
    const q = new URLSearchParams(Object.entries(filter).filter(([, v]) => v)).toString();
    api<{ result: HistoryRecord[] } | HistoryRecord[]>('GET', `/session/${session.id}/scheduling-history${q ? `?${q}` : ''}`).then((r) =>
      setRows(Array.isArray(r) ? r : (r as any).result ?? (r as any).items ?? []),
    );
  }, [session.id, filter]);
  useEffect(load, [load]);
  const field = (k: string, label: string) => (
    <Input
      placeholder={label}
      allowClear
      style={{ width: 130 }}
      value={filter[k] ?? ''}
      onChange={(e) => setFilter((f) => ({ ...f, [k]: e.target.value }))}
    />
  );
  return (
    <Modal open width={1000} title={`Scheduling history of ${session.name}`} onCancel={onClose} footer={null}>
      <Space wrap style={{ marginBottom: 12 }}>
        {field('id', 'ID')}
        {field('phase', 'Phase')}
        <Select
          allowClear
          placeholder="Result"
          style={{ width: 130 }}
          value={filter.result || undefined}
          onChange={(v) => setFilter((f) => ({ ...f, result: v ?? '' }))}
          options={Object.keys(RESULT_COLOR).map((r) => ({ value: r, label: r }))}
        />
        {field('from_status', 'From status')}
        {field('to_status', 'To status')}
        {field('error_code', 'Error code')}
        {field('message', 'Message')}
        <Button onClick={load}>Refresh</Button>
      </Space>
      <Table<HistoryRecord>
        size="small"
        rowKey="id"
        dataSource={rows}
        pagination={false}
        expandable={{
          rowExpandable: (r) => !!r.sub_steps?.length,
          expandedRowRender: (r) => (
            <List
              size="small"
              dataSource={r.sub_steps ?? []}
              renderItem={(s) => (
                <List.Item>
                  <Tag color={RESULT_COLOR[s.result] ?? 'default'}>{s.result}</Tag> {s.step}: {s.message}
                </List.Item>
              )}
            />
          ),
        }}
        columns={[
          { title: 'Phase', dataIndex: 'phase' },
          { title: 'Result', dataIndex: 'result', render: (r: string) => <Tag color={RESULT_COLOR[r] ?? 'default'}>{r}</Tag> },
          { title: 'Status', render: (_, r) => `${r.from_status ?? '-'} → ${r.to_status ?? '-'}` },
          { title: 'Attempts', dataIndex: 'attempts' },
          { title: 'Message', dataIndex: 'message' },
          { title: 'Created', dataIndex: 'created_at', sorter: (a, b) => a.created_at.localeCompare(b.created_at) },
          { title: 'Updated', dataIndex: 'updated_at', sorter: (a, b) => a.updated_at.localeCompare(b.updated_at) },
        ]}
      />
    </Modal>
  );
}

function Detail({ id, onClose, onRenamed }: { id: string; onClose: () => void; onRenamed: () => void }) {
  const { message } = AntApp.useApp();
  const [s, setS] = useState<any>(null);
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState('');
  const load = useCallback(() => {
    api('GET', `/session/${id}`).then(setS, (e) => message.error(errText(e)));
  }, [id, message]);
  useEffect(load, [load]);
  if (!s) return null;
  const rename = async () => {
    try {
      await api('POST', `/session/${id}/rename?name=${encodeURIComponent(name)}`);
      setEditing(false);
      load();
      onRenamed();
    } catch (e) {
      message.error(errText(e));
    }
  };
  const pending = s.pending;
  return (
    <Drawer open width={640} title="Session detail" onClose={onClose}>
      <Descriptions column={1} bordered size="small">
        <Descriptions.Item label="Name">
          {editing ? (
            <Space.Compact>
              <Input data-testid="rename-input" value={name} onChange={(e) => setName(e.target.value)} />
              <Button type="primary" onClick={rename} data-testid="rename-save">Save</Button>
            </Space.Compact>
          ) : (
            <Space>
              <span data-testid="detail-name">{s.name}</span>
              <Button size="small" onClick={() => { setName(s.name); setEditing(true); }} data-testid="rename">Edit</Button>
            </Space>
          )}
        </Descriptions.Item>
        <Descriptions.Item label="ID">{s.id}</Descriptions.Item>
        <Descriptions.Item label="User">{s.user_email}</Descriptions.Item>
        <Descriptions.Item label="Status">
          <Tag color={STATUS_COLOR[s.status]}>{s.status}</Tag> {s.status_info}
        </Descriptions.Item>
        {pending && (
          <Descriptions.Item label="Why pending">
            {pending.reason} {pending.queue_position ? `(queue position ${pending.queue_position} of ${pending.queue_length})` : ''}
          </Descriptions.Item>
        )}
        <Descriptions.Item label="Type">{s.type}</Descriptions.Item>
        <Descriptions.Item label="Environment">{s.image}</Descriptions.Item>
        <Descriptions.Item label="Mounts">{(s.mounts ?? []).map((m: any) => m.name ?? m).join(', ') || '-'}</Descriptions.Item>
        <Descriptions.Item label="Resources">{formatSlots(JSON.stringify(s.requested_slots ?? {}))}</Descriptions.Item>
        <Descriptions.Item label="Created">{s.created_at}</Descriptions.Item>
        <Descriptions.Item label="Elapsed">{elapsed(s.created_at, s.terminated_at)}</Descriptions.Item>
        <Descriptions.Item label="Agent">{s.agent ?? '-'}</Descriptions.Item>
        <Descriptions.Item label="Cluster mode">{s.cluster_mode} ({s.cluster_size})</Descriptions.Item>
        <Descriptions.Item label="Network I/O">
          {s.network ? `${s.network.rx_bytes} B in, ${s.network.tx_bytes} B out${s.network.last_activity ? `, last at ${s.network.last_activity}` : ''}` : '-'}
        </Descriptions.Item>
        <Descriptions.Item label="Kernels">
          {(s.kernels ?? s.containers ?? []).map((k: any) => k.id ?? k.row_id).join(', ')}
        </Descriptions.Item>
      </Descriptions>
    </Drawer>
  );
}

export default function Sessions({ me, notify, onStart }: { me: Me; notify: (t: string, id?: string) => void; onStart: (s: LaunchSettings | null) => void }) {
  const { message, notification } = AntApp.useApp();
  const [tab, setTab] = useState('running');
  const [items, setItems] = useState<SessionItem[]>([]);
  const [loading, setLoading] = useState(false);
  const [dialog, setDialog] = useState<{ kind: 'apps' | 'logs' | 'history'; s: SessionItem } | null>(null);
  const [detail, setDetail] = useState<string | null>(null);
  const [, tick] = useState(0);
  const group = useMemo(() => GROUPS.find((g) => g.key === tab)!, [tab]);
  // Only the newest request may fill the table: a slower answer for a tab the user already
  // left (or an older refresh) must not overwrite the newer one.
  const seq = useRef(0);
  const refresh = useCallback(() => {
    const mine = ++seq.current;
    setLoading(true);
    listSessions(group.statuses)
      .then(
        (rows) => mine === seq.current && setItems(rows),
        (e) => mine === seq.current && message.error(errText(e)),
      )
      .finally(() => mine === seq.current && setLoading(false));
  }, [group, message]);
  const timer = useRef<number | undefined>(undefined);
  useEffect(refresh, [refresh]);
  // Live updates: every lifecycle event of a visible session refreshes the list.
  useEffect(() => {
    const es = new EventSource('/events/session?sessionName=*&scope=session');
    const onEvent = (ev: MessageEvent) => {
      try {
        const d = JSON.parse(ev.data);
        if (ev.type === 'session_started') {
          notify(`${d.sessionName} is running`, d.sessionId);
          const item = { id: d.sessionId, name: d.sessionName } as SessionItem;
          const key = `started-${d.sessionId}`;
          notification.open({
            key,
            placement: 'bottomRight',
            message: `${d.sessionName}`,
            description: <Tag color="green">RUNNING</Tag>,
            btn: (
              <Space>
                <Button size="small" onClick={() => setDialog({ kind: 'apps', s: item })}>Apps</Button>
                <Button size="small" onClick={() => openApp(d.sessionId, 'ttyd', { path: true }).catch((e) => message.error(errText(e)))}>Terminal</Button>
                <Button size="small" onClick={() => setDialog({ kind: 'logs', s: item })}>Logs</Button>
                <Button size="small" danger onClick={() => { notification.destroy(key); api('DELETE', `/session/${d.sessionId}`).catch((e) => message.error(errText(e))); }}>Terminate</Button>
              </Space>
            ),
          });
        }
        if (ev.type === 'session_terminated') notify(`${d.sessionName} terminated`, d.sessionId);
      } catch {
        /* keep-alive */
      }
      window.clearTimeout(timer.current);
      timer.current = window.setTimeout(refresh, 150);
    };
    for (const t of ['session_enqueued', 'session_scheduled', 'session_preparing', 'session_started', 'session_terminating', 'session_terminated', 'session_cancelled', 'session_success', 'session_failure'])
      es.addEventListener(t, onEvent as EventListener);
    const t = window.setInterval(() => tick((n) => n + 1), 1000);
    return () => {
      es.close();
      window.clearInterval(t);
      window.clearTimeout(timer.current);
    };
  }, [refresh, notify, notification, message]);

  const terminate = async (s: SessionItem) => {
    try {
      await api('DELETE', `/session/${s.id}`);
      message.success(`${s.name} is terminating`);
    } catch (e) {
      message.error(errText(e));
    }
  };

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
                  <Button size="small" onClick={() => setDialog({ kind: 'logs', s })} data-testid={`logs-${s.name}`}>Logs</Button>
                  {!FINISHED_STATES.includes(s.status) && (
                    <Popconfirm title={`Terminate ${s.name}?`} okText="Terminate" onConfirm={() => terminate(s)}>
                      <Button size="small" danger data-testid={`terminate-${s.name}`}>Terminate</Button>
                    </Popconfirm>
                  )}
                </Space>
              );
            },
          },
        ]}
      />
      <Badge />
      {dialog?.kind === 'apps' && <AppsDialog session={dialog.s} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'logs' && <LogsModal session={dialog.s} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'history' && <HistoryModal session={dialog.s} onClose={() => setDialog(null)} />}
      {detail && <Detail id={detail} onClose={() => setDetail(null)} onRenamed={refresh} />}
      <Form style={{ display: 'none' }} />
    </>
  );
}
