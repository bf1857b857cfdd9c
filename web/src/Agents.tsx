// The Agents page (administrators): every agent from `GET /agents` with its resource group,
// whether the manager reaches it, what it has, holds and has free, and its accelerator
// devices (model, memory, unit, capacity).
import { useCallback, useEffect, useState } from 'react';
import { App as AntApp, Button, Space, Table, Tag, Typography } from 'antd';
import { api, formatSlotMap, Schema } from './api';
import { displayUnit, formatDevice } from './accel';
import { errText } from './dialogs';

type Agent = Schema<'Agent'>;

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
          { title: 'Status', dataIndex: 'alive', render: (alive: boolean) => (alive ? <Tag color="green">alive</Tag> : <Tag color="red">lost</Tag>) },
          { title: 'Capacity', render: (_, a) => formatSlotMap(a.capacity) },
          { title: 'Used', render: (_, a) => formatSlotMap(a.used) },
          { title: 'Free', render: (_, a) => formatSlotMap(a.free) },
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
        ]}
      />
    </>
  );
}
