// The Agents page (administrators): every agent from `GET /agents` with its resource group,
// where it connects from, its state (ALIVE, DISCONNECTED, LOST, GONE; drained), what it has,
// holds and has free, its last heartbeat and version, its accelerator devices, its warm pools
// (kernels started ahead per shape, and how creates used them; not known while the agent is
// not alive), each cell at most two lines (details in tooltips), and the
// drain / undrain buttons (and why an agent cannot enforce egress policies, if it cannot);
// below, the resource groups with their egress policies, and the join tokens remote agents use (make one for a resource
// group, shown once with the `baid agent` command to run; list; revoke).
import { useCallback, useEffect, useState } from 'react';
import { Alert, App as AntApp, Button, Input, Popconfirm, Space, Table, Tag, Tooltip, Typography } from 'antd';
import { api, formatTime, Schema } from './api';
import { deviceSummary, heartbeat, resourceLines } from './agentRow';
import { errText } from './dialogs';
import FairShare from './FairShare';
import ResourceGroups from './ResourceGroups';
import { poolCell } from './warmPool';

type Agent = Schema<'Agent'>;
type Token = Schema<'AgentToken'>;

const STATUS_COLORS: Record<string, string> = { ALIVE: 'green', DISCONNECTED: 'gold', LOST: 'red', GONE: 'default' };
/** One line of a cell: never wrapped, cut with an ellipsis (the whole text in its tooltip). */
const LINE = { whiteSpace: 'nowrap', overflow: 'hidden', textOverflow: 'ellipsis' } as const;
const TAG = { marginInlineEnd: 0 } as const;

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
        size="middle"
        tableLayout="fixed"
        data-testid="agent-table"
        columns={[
          {
            // The id, and below it the resource group and where it connects from.
            title: 'Agent',
            render: (_, a) => {
              const where = a.remote ? a.address || '-' : 'in the manager';
              return (
                <>
                  <div style={LINE} title={a.id} data-testid={`agent-${a.id}`}>{a.id}</div>
                  <div style={{ ...LINE, fontSize: 12 }} title={`resource group ${a.scaling_group} · ${where}`}>
                    <Typography.Text type="secondary">{a.scaling_group} · {where}</Typography.Text>
                  </div>
                </>
              );
            },
          },
          {
            title: 'Status',
            width: 110,
            render: (_, a) => (
              <span data-testid={`agent-status-${a.id}`} style={{ display: 'flex', flexWrap: 'wrap', gap: 4 }}>
                <Tag color={STATUS_COLORS[a.status] ?? 'default'} style={TAG}>{a.status.toLowerCase()}</Tag>
                {a.drained && <Tag color="orange" style={TAG}>drained</Tag>}
                {a.withheld && (
                  <Tooltip title={`Offers nothing now: ${a.withheld}`}>
                    <Tag color="orange" style={TAG} data-testid={`agent-withheld-${a.id}`}>withheld</Tag>
                  </Tooltip>
                )}
                {(a.kernel_most ?? []).map((m) => (
                  <Tooltip key={m.slot} title={`A kernel may have at most ${m.slot}=${m.most} here: ${m.why}`}>
                    <Tag color="blue" style={TAG} data-testid={`agent-kernel-most-${a.id}`}>kernel ≤ {m.most}</Tag>
                  </Tooltip>
                ))}
                {a.egress_error && (
                  <Tooltip title={`No egress rules (open groups only): ${a.egress_error}`}>
                    <Tag color="red" style={TAG} data-testid={`agent-egress-error-${a.id}`}>no egress rules</Tag>
                  </Tooltip>
                )}
              </span>
            ),
          },
          {
            // Free of its capacity (what its sessions hold in the tooltip).
            title: 'Resources',
            width: 230,
            render: (_, a) => {
              const r = resourceLines(a);
              // A lost agent's figures are what it last reported, not what it has now.
              const alive = a.status === 'ALIVE';
              return (
                <div title={alive ? r.full : `last reported: ${r.full}`} data-testid={`agent-resources-${a.id}`}>
                  <div style={LINE}>{alive ? r.free : <Typography.Text type="secondary">{r.free}</Typography.Text>}</div>
                  <div style={{ ...LINE, fontSize: 12 }}><Typography.Text type="secondary">{r.of}</Typography.Text></div>
                </div>
              );
            },
          },
          {
            title: 'Devices',
            width: 150,
            render: (_, a) => {
              const d = deviceSummary(a.devices);
              if (!d.lines.length) return <Typography.Text type="secondary" data-testid={`agent-devices-${a.id}`}>none</Typography.Text>;
              return (
                <Tooltip title={d.lines.map((l) => <div key={l}>{l}</div>)}>
                  <div data-testid={`agent-devices-${a.id}`}>
                    <div style={LINE}>{d.text}</div>
                    <div style={{ ...LINE, fontSize: 12 }}><Typography.Text type="secondary">{d.detail}</Typography.Text></div>
                  </div>
                </Tooltip>
              );
            },
          },
          {
            // Ready kernels while the agent is alive; a lost one's pools are not known.
            title: 'Warm pools',
            width: 150,
            render: (_, a) => {
              const p = poolCell(a.status, a.warm_pool);
              if (!p.ready && !p.stale) return null;
              return (
                <Tooltip title={p.lines.map((l) => <div key={l}>{l}</div>)}>
                  <div data-testid={`agent-warm-pool-${a.id}`}>
                    {p.stale ? (
                      <div style={LINE}><Typography.Text type="secondary" data-testid={`agent-warm-pool-stale-${a.id}`}>{p.stale}</Typography.Text></div>
                    ) : (
                      <>
                        <div style={LINE}>{p.ready}</div>
                        <div style={{ ...LINE, fontSize: 12 }}><Typography.Text type="secondary">{p.counters}</Typography.Text></div>
                      </>
                    )}
                  </div>
                </Tooltip>
              );
            },
          },
          {
            // When it was last heard from, and its version.
            title: 'Heartbeat',
            width: 130,
            render: (_, a) => {
              const h = heartbeat(a.last_heartbeat);
              return (
                <>
                  <div style={LINE} title={`last heartbeat ${h.full}`}>{h.short}</div>
                  <div style={{ ...LINE, fontSize: 12 }} title={`version ${a.version}`}><Typography.Text type="secondary">{a.version}</Typography.Text></div>
                </>
              );
            },
          },
          {
            title: '',
            width: 90,
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
      <FairShare />
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
          { title: 'Made', dataIndex: 'created_at', render: (t: string) => formatTime(t) },
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
