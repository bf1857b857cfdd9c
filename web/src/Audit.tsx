// The Audit log page (administrators): who did what and when, newest first, from
// `GET /admin/audit` — every signed request that changed something, each GraphQL mutation,
// web logins (refused and throttled ones too) — filtered by who, action and target.
import { useCallback, useEffect, useState } from 'react';
import { App as AntApp, Button, Input, Space, Table, Tag, Typography } from 'antd';
import { api, formatTime, Schema } from './api';
import { errText } from './dialogs';

type Entry = Schema<'AuditEntry'>;

export default function Audit() {
  const { message } = AntApp.useApp();
  const [entries, setEntries] = useState<Entry[]>([]);
  const [loading, setLoading] = useState(false);
  const [actor, setActor] = useState('');
  const [action, setAction] = useState('');
  const [target, setTarget] = useState('');
  const load = useCallback(() => {
    setLoading(true);
    api('GET', '/admin/audit', {
      query: { actor: actor.trim() || undefined, action: action.trim() || undefined, target: target.trim() || undefined, limit: 200 },
    })
      .then((r) => setEntries(r.entries), (e) => message.error(errText(e)))
      .finally(() => setLoading(false));
  }, [message, actor, action, target]);
  // Loaded once on opening; the filters apply when Search is pressed, not on every key.
  const [opened, setOpened] = useState(false);
  useEffect(() => {
    if (!opened) {
      setOpened(true);
      load();
    }
  }, [opened, load]);
  return (
    <>
      <Space style={{ marginBottom: 12, width: '100%', justifyContent: 'space-between' }}>
        <Typography.Title level={3} style={{ margin: 0 }}>Audit log</Typography.Title>
        <Space>
          <Input placeholder="who (e-mail)" value={actor} onChange={(e) => setActor(e.target.value)} data-testid="audit-actor" allowClear />
          <Input placeholder="action, e.g. POST /session*" value={action} onChange={(e) => setAction(e.target.value)} data-testid="audit-action" allowClear />
          <Input placeholder="target" value={target} onChange={(e) => setTarget(e.target.value)} data-testid="audit-target" allowClear />
          <Button type="primary" onClick={load} loading={loading} data-testid="audit-search">Search</Button>
        </Space>
      </Space>
      <Table<Entry>
        rowKey="id"
        dataSource={entries}
        loading={loading}
        size="small"
        tableLayout="fixed"
        pagination={{ pageSize: 50 }}
        data-testid="audit-table"
        columns={[
          // One line a row (at 1280 × 800 too): long values end with an ellipsis, whole in their tooltips.
          { title: 'When', dataIndex: 'at', width: 190, ellipsis: true, render: (t: string) => formatTime(t) },
          { title: 'Who', dataIndex: 'actor', width: 170, ellipsis: true },
          {
            title: 'Action',
            dataIndex: 'action',
            width: 250,
            ellipsis: { showTitle: false },
            render: (a: string) => <Typography.Text code title={a}>{a}</Typography.Text>,
          },
          { title: 'Target', dataIndex: 'target', ellipsis: true },
          {
            title: 'Outcome',
            width: 170,
            ellipsis: { showTitle: false },
            render: (_, e) => (
              <span title={[e.outcome, e.detail].filter(Boolean).join(' ')}>
                <Tag color={e.outcome === 'ok' ? 'green' : 'red'}>{e.outcome}</Tag>
                {e.detail}
              </span>
            ),
          },
        ]}
      />
    </>
  );
}
