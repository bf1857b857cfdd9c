// The Agents page (administrators): every agent from `GET /agents` with its resource group,
// where it connects from, its state (ALIVE, DISCONNECTED, LOST, GONE; drained), what it has,
// holds and has free, its last heartbeat and version, its accelerator devices, its warm pools
// (kernels started ahead per shape, and how creates used them), and the
// drain / undrain buttons (and why an agent cannot enforce egress policies, if it cannot);
// below, the resource groups with their egress policies, and the join tokens remote agents use (make one for a resource
// group, shown once with the `baid agent` command to run; list; revoke).
import { useCallback, useEffect, useState } from 'react';
import { Alert, App as AntApp, Button, Input, Popconfirm, Space, Table, Tag, Typography } from 'antd';
import { api, formatSlotMap, Schema } from './api';
import { displayUnit, formatDevice } from './accel';
import { errText } from './dialogs';
import ResourceGroups from './ResourceGroups';
import { formatPool, warmPoolSummary } from './warmPool';

type Agent = Schema<'Agent'>;
type Token = Schema<'AgentToken'>;

const STATUS_COLORS: Record<string, string> = { ALIVE: 'green', DISCONNECTED: 'gold', LOST: 'red', GONE: 'default' };

export default function Agents() {
  const { message } = AntApp.useApp();
  const [agents, setAgents] = useState<Agent[]>([]);
  const [loading, setLoading] = useState(false);
  const load = useCallback(() => {
    setLoading(true);
    api('GET', '/agents')
      .then((r) => setAgents(r.agents), (e) => message.error(errText(e)))
      .finally(() => setLoading(false));
  }, [message]);
  useEffect(load, [load]);
  const drain = (a: Agent, drained: boolean) => {
    const req = { path: { id: a.id } };
    (drained ? api('POST', '/admin/agents/{id}/drain', req) : api('POST', '/admin/agents/{id}/undrain', req)).then(
      () => {
        message.success(drained ? `${a.id} takes no new sessions` : `${a.id} takes new sessions again`);
        load();
      },
      (e) => message.error(errText(e)),
    );
  };

  return (
    <>
      <Space style={{ marginBottom: 12, width: '100%', justifyContent: 'space-between' }}>
        <Typography.Title level={3} style={{ margin: 0 }}>Agents</Typography.Title>
        <Button onClick={load} loading={loading} data-testid="agents-refresh">Refresh</Button>
      </Space>
      <Table<Agent>
        rowKey="id"
        dataSource={agents}
        loading={loading}
        pagination={false}
        data-testid="agent-table"
        columns={[
          { title: 'ID', dataIndex: 'id', render: (id: string) => <span data-testid={`agent-${id}`}>{id}</span> },
          { title: 'Resource group', dataIndex: 'scaling_group' },
          { title: 'Address', render: (_, a) => (a.remote ? a.address || '-' : <Typography.Text type="secondary">in the manager</Typography.Text>) },
          {
            title: 'Status',
            render: (_, a) => (
              <span data-testid={`agent-status-${a.id}`}>
                <Tag color={STATUS_COLORS[a.status] ?? 'default'}>{a.status.toLowerCase()}</Tag>
                {a.drained && <Tag color="orange">drained</Tag>}
                {a.egress_error && (
                  <Tag color="red" title={a.egress_error} data-testid={`agent-egress-error-${a.id}`}>
                    no egress rules: open groups only
                  </Tag>
                )}
              </span>
            ),
          },
          { title: 'Capacity', render: (_, a) => formatSlotMap(a.capacity) },
          { title: 'Used', render: (_, a) => formatSlotMap(a.used) },
          { title: 'Free', render: (_, a) => formatSlotMap(a.free) },
          { title: 'Last heartbeat', render: (_, a) => a.last_heartbeat.replace('T', ' ').replace('Z', ' UTC') },
          { title: 'Version', dataIndex: 'version' },
          {
            title: 'Devices',
            render: (_, a) =>
              a.devices.length ? (
                <Space direction="vertical" size={0} data-testid={`agent-devices-${a.id}`}>
                  {a.devices.map((d) => (
                    <span key={`${d.slot}/${d.id}`}>
                      <Tag>{displayUnit(d.slot)} {d.id}</Tag>
                      {formatDevice(d)}
                      {d.plugin === 'mock' && <Typography.Text type="secondary"> (mock)</Typography.Text>}
                    </span>
                  ))}
                </Space>
              ) : (
                <Typography.Text type="secondary">none</Typography.Text>
              ),
          },
          {
            title: 'Warm pools',
            render: (_, a) => {
              const summary = warmPoolSummary(a.warm_pool);
              return summary ? (
                <Space direction="vertical" size={0} data-testid={`agent-warm-pool-${a.id}`}>
                  {a.warm_pool.pools.map((p) => (
                    <span key={p.shape}>{formatPool(p)}</span>
                  ))}
                  <Typography.Text type="secondary">{summary}</Typography.Text>
                </Space>
              ) : null;
            },
          },
          {
            title: '',
            render: (_, a) =>
              a.drained ? (
                <Button size="small" onClick={() => drain(a, false)} data-testid={`undrain-${a.id}`}>Undrain</Button>
              ) : (
                <Button size="small" onClick={() => drain(a, true)} data-testid={`drain-${a.id}`}>Drain</Button>
              ),
          },
        ]}
      />
      <ResourceGroups />
      <JoinTokens onChange={load} />
    </>
  );
}

/** Join tokens: made for a resource group, shown once; revoking one disconnects its agents. */
function JoinTokens({ onChange }: { onChange: () => void }) {
  const { message } = AntApp.useApp();
  const [tokens, setTokens] = useState<Token[]>([]);
  const [group, setGroup] = useState('');
  const [made, setMade] = useState<Token | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(() => {
    api('GET', '/admin/agent-tokens').then((r) => setTokens(r.tokens), (e) => message.error(errText(e)));
  }, [message]);
  useEffect(load, [load]);
  const make = () => {
    setError(null);
    api('POST', '/admin/agent-tokens', { body: { group: group.trim() || null } }).then(
      (t) => {
        setMade(t);
        load();
      },
      (e) => setError(errText(e)),
    );
  };
  const revoke = (t: Token) =>
    api('DELETE', '/admin/agent-tokens/{id}', { path: { id: t.id } }).then(
      () => {
        message.success(`token ${t.id} is revoked; its agents are disconnected`);
        load();
        onChange();
      },
      (e) => message.error(errText(e)),
    );
  return (
    <>
      <Typography.Title level={4} style={{ marginTop: 24 }}>Join tokens</Typography.Title>
      <Space align="start" style={{ marginBottom: 12 }}>
        <div>
          <Input
            placeholder="resource group (default)"
            value={group}
            onChange={(e) => {
              setGroup(e.target.value);
              setError(null);
            }}
            status={error ? 'error' : ''}
            data-testid="token-group"
            style={{ width: 240 }}
          />
          {error && <div style={{ color: '#cf1322', fontSize: 12, marginTop: 4 }} data-testid="token-error">{error}</div>}
        </div>
        <Button type="primary" onClick={make} data-testid="token-create">New join token</Button>
      </Space>
      {made?.token && (
        <Alert
          type="success"
          showIcon
          closable
          onClose={() => setMade(null)}
          style={{ marginBottom: 12 }}
          message={`Token ${made.id} for resource group ${made.group}: it is shown only now`}
          description={
            <Typography.Paragraph copyable={{ text: `baid agent --manager ${made.agent_listen ?? 'MANAGER:8091'} --token ${made.token}` }} data-testid="token-command" style={{ marginBottom: 0 }}>
              <code>baid agent --manager {made.agent_listen ?? 'MANAGER:8091'} --token {made.token}</code>
            </Typography.Paragraph>
          }
        />
      )}
      <Table<Token>
        rowKey="id"
        size="small"
        dataSource={tokens}
        pagination={false}
        data-testid="token-table"
        columns={[
          { title: 'ID', dataIndex: 'id' },
          { title: 'Resource group', dataIndex: 'group' },
          { title: 'Made by', dataIndex: 'created_by' },
          { title: 'Made', dataIndex: 'created_at', render: (t: string) => t.replace('T', ' ').replace('Z', ' UTC') },
          { title: 'State', render: (_, t) => (t.revoked_at ? <Tag>revoked</Tag> : <Tag color="green">valid</Tag>) },
          {
            title: '',
            render: (_, t) =>
              !t.revoked_at && (
                <Popconfirm title={`Revoke ${t.id}? Its agents are disconnected and cannot join again.`} okText="Revoke" onConfirm={() => revoke(t)}>
                  <Button size="small" danger data-testid={`revoke-${t.id}`}>Revoke</Button>
                </Popconfirm>
              ),
          },
        ]}
      />
    </>
  );
}
