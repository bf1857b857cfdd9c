// The Agents page (administrators): every agent from `GET /agents` with its resource group,
// where it connects from, its state (ALIVE, DISCONNECTED, LOST, GONE; drained), what it has,
// holds and has free, its last heartbeat and version, its accelerator devices, and the
// drain / undrain buttons.
import { useCallback, useEffect, useState } from 'react';
import { App as AntApp, Button, Space, Table, Tag, Typography } from 'antd';
import { api, formatSlotMap, Schema } from './api';
import { displayUnit, formatDevice } from './accel';
import { errText } from './dialogs';

type Agent = Schema<'Agent'>;

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
    </>
  );
}
