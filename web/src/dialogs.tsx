// The dialogs of the Sessions page: app launcher, log viewer, scheduling history.
import { useCallback, useEffect, useState } from 'react';
import { App as AntApp, Button, Checkbox, Input, List, Modal, Select, Space, Table, Tag, Typography } from 'antd';
import { api, ApiError, formatTime, Query, Schema } from './api';

export const STATUS_COLOR: Record<string, string> = {
  PENDING: 'gold', SCHEDULED: 'cyan', PREPARING: 'blue', PULLING: 'blue', PREPARED: 'blue', CREATING: 'blue',
  RUNNING: 'green', PREEMPTED: 'volcano', TERMINATING: 'orange', TERMINATED: 'default', CANCELLED: 'default', ERROR: 'red',
};

/** Result badge colours of the Scheduling History table, as the seed's table gives them. */
export const RESULT_COLOR: Record<string, string> = {
  SUCCESS: 'green', FAILURE: 'red', STALE: 'default', NEED_RETRY: 'gold', EXPIRED: 'red', GIVE_UP: 'red', SKIPPED: 'default',
};

export function errText(e: unknown) {
  return e instanceof ApiError ? e.message : String(e);
}

/** A session as the dialogs need it. */
export interface SessionRef {
  id: string;
  name: string;
}

/** Opens an app through the app proxy in a new tab. The tab is opened at once, while the
 *  click still counts as the user's (starting an app such as Jupyter takes seconds, and a
 *  later window.open would be blocked), then sent to the app's URL. */
export async function openApp(session: string, app: string, opts: { public?: boolean; port?: number; path?: boolean } = {}) {
  const tab = window.open('about:blank', '_blank');
  try {
    const r = await api('POST', '/session/{reference}/start-service', {
      path: { reference: session },
      body: { app, mode: opts.path ? 'path' : 'port', port: opts.port ?? null, open_to_public: !!opts.public },
    });
    if (tab) tab.location.href = r.url;
    else window.open(r.url, '_blank');
    return r.url;
  } catch (e) {
    tab?.close();
    throw e;
  }
}

export function AppsDialog({ session, onClose }: { session: SessionRef; onClose: () => void }) {
  const { message } = AntApp.useApp();
  const [apps, setApps] = useState<Schema<'App'>[]>([]);
  const [publicApp, setPublic] = useState(false);
  const [tryPort, setTryPort] = useState(false);
  const [port, setPort] = useState<string>('');
  const portProblem = tryPort && port !== '' && !(/^\d+$/.test(port) && Number(port) >= 1024 && Number(port) <= 65535) ? 'Use a port from 1024 to 65535.' : null;
  useEffect(() => {
    api('GET', '/stream/session/{reference}/apps', { path: { reference: session.id } }).then(setApps, (e) => message.error(errText(e)));
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
                  disabled={!!portProblem}
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
            <List.Item.Meta
              title={a.protocol === 'preopen' ? `Port ${a.name}` : a.name}
              description={
                a.protocol === 'preopen'
                  ? `preopen port ${a.ports.join(',')}: bind a server to it inside the session first`
                  : `${a.protocol}, container port ${a.ports.join(',')}`
              }
            />
          </List.Item>
        )}
      />
      <Space direction="vertical">
        <Checkbox checked={publicApp} onChange={(e) => setPublic(e.target.checked)} data-testid="app-public">
          Open app to public
        </Checkbox>
        <Space align="start">
          <Checkbox checked={tryPort} onChange={(e) => setTryPort(e.target.checked)}>
            Try preferred port
          </Checkbox>
          <div>
            <Input style={{ width: 120 }} disabled={!tryPort} value={port} status={portProblem ? 'error' : ''} onChange={(e) => setPort(e.target.value.trim())} placeholder="30000" />
            {portProblem && <div style={{ color: '#cf1322', fontSize: 12 }}>{portProblem}</div>}
          </div>
        </Space>
      </Space>
    </Modal>
  );
}

/** The logs of a session's main kernel, or of the kernel given. */
export function LogsModal({ session, kernelId, onClose }: { session: SessionRef; kernelId?: string; onClose: () => void }) {
  const [text, setText] = useState('Loading…');
  const load = useCallback(() => {
    api('GET', '/session/{reference}/logs', { path: { reference: session.id }, query: { kernel_id: kernelId } }).then(
      (r) => setText(r.result.logs || '(no output yet)'),
      (e) => setText(errText(e)),
    );
  }, [session.id, kernelId]);
  useEffect(load, [load]);
  return (
    <Modal open width={900} title={`Logs of ${session.name}${kernelId ? ` (kernel ${kernelId.slice(0, 8)})` : ''}`} onCancel={onClose} footer={<Button onClick={load}>Refresh</Button>}>
      <pre data-testid="logs" style={{ maxHeight: 500, overflow: 'auto', background: '#111', color: '#eee', padding: 12 }}>{text}</pre>
    </Modal>
  );
}

type SubStep = Schema<'SubStep'>;
type HistoryRecord = Schema<'HistoryRecord'>;
type HistoryFilter = Query<'GET', '/session/{reference}/scheduling-history'>;

/** The Scheduling History modal: filter bar, refresh, records with expandable sub-steps. */
export function HistoryModal({ session, onClose }: { session: SessionRef; onClose: () => void }) {
  const [rows, setRows] = useState<HistoryRecord[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [filter, setFilter] = useState<HistoryFilter>({});
  const idProblem = filter.id && !/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(filter.id.trim()) ? 'IDs are UUIDs, as the ID column shows them.' : null;
  const load = useCallback(() => {
    if (idProblem) return;
    const query = Object.fromEntries(Object.entries(filter).filter(([, v]) => v));
    api('GET', '/session/{reference}/scheduling-history', { path: { reference: session.id }, query }).then(
      (r) => {
        setRows(r.result);
        setError(null);
      },
      (e) => setError(errText(e)),
    );
  }, [session.id, filter, idProblem]);
  useEffect(load, [load]);
  const field = (k: keyof HistoryFilter, label: string, problem?: string | null) => (
    <div>
      <Input
        placeholder={label}
        allowClear
        style={{ width: 130 }}
        status={problem ? 'error' : ''}
        data-testid={`history-filter-${k}`}
        value={filter[k] ?? ''}
        onChange={(e) => setFilter((f) => ({ ...f, [k]: e.target.value }))}
      />
      {problem && <div style={{ color: '#cf1322', fontSize: 12 }}>{problem}</div>}
    </div>
  );
  return (
    <Modal open width={1100} title={`Scheduling history of ${session.name}`} onCancel={onClose} footer={null}>
      <Space wrap align="start" style={{ marginBottom: 12 }}>
        {field('id', 'ID', idProblem)}
        {field('phase', 'Phase')}
        <Select
          allowClear
          placeholder="Result"
          style={{ width: 130 }}
          data-testid="history-filter-result"
          value={filter.result || undefined}
          onChange={(v) => setFilter((f) => ({ ...f, result: v ?? '' }))}
          options={Object.keys(RESULT_COLOR).map((r) => ({ value: r, label: r }))}
        />
        {field('from_status', 'From status')}
        {field('to_status', 'To status')}
        {field('error_code', 'Error code')}
        {field('message', 'Message')}
        <Button onClick={load} data-testid="history-refresh">Refresh</Button>
      </Space>
      {error && <Typography.Text type="danger">{error}</Typography.Text>}
      <Table<HistoryRecord>
        size="small"
        rowKey="id"
        dataSource={rows}
        pagination={false}
        data-testid="history-table"
        expandable={{
          rowExpandable: (r) => !!r.sub_steps?.length,
          expandedRowRender: (r) => (
            <Table<SubStep>
              size="small"
              rowKey={(s) => `${s.step}-${s.started_at ?? ''}`}
              dataSource={r.sub_steps ?? []}
              pagination={false}
              data-testid={`substeps-${r.id}`}
              columns={[
                { title: 'Step', dataIndex: 'step' },
                { title: 'Result', dataIndex: 'result', render: (x: string) => <Tag color={RESULT_COLOR[x] ?? 'default'}>{x}</Tag> },
                { title: 'Message', dataIndex: 'message' },
                { title: 'Error Code', dataIndex: 'error_code', render: (x) => x ?? '-' },
                { title: 'Started At', dataIndex: 'started_at', render: formatTime },
                { title: 'Ended At', dataIndex: 'ended_at', render: formatTime },
              ]}
            />
          ),
        }}
        columns={[
          { title: 'ID', dataIndex: 'id', render: (id: string) => <Typography.Text copyable={{ text: id }} data-testid={`history-id-${id}`}>{id.slice(0, 8)}</Typography.Text> },
          { title: 'Phase', dataIndex: 'phase' },
          { title: 'Result', dataIndex: 'result', render: (r: string) => <Tag color={RESULT_COLOR[r] ?? 'default'}>{r}</Tag> },
          { title: 'Status Transition', render: (_, r) => `${r.from_status ?? '-'} → ${r.to_status ?? '-'}` },
          { title: 'Attempts', dataIndex: 'attempts' },
          { title: 'Message', dataIndex: 'message' },
          { title: 'Error Code', dataIndex: 'error_code', render: (x) => x ?? '-' },
          { title: 'Updated At', dataIndex: 'updated_at', render: formatTime, sorter: (a, b) => a.updated_at.localeCompare(b.updated_at) },
          { title: 'Created At', dataIndex: 'created_at', render: formatTime, sorter: (a, b) => a.created_at.localeCompare(b.created_at), defaultSortOrder: 'ascend' },
        ]}
      />
    </Modal>
  );
}
