// Resource groups on the admin page: each group with its agents, what they have free and
// its egress policy; an administrator changes a group's policy here (PATCH
// /admin/resource-groups/{name}). A destination the server refuses is shown beside the field.
import { useCallback, useEffect, useState } from 'react';
import { App as AntApp, Button, Input, Select, Space, Table, Tag, Typography } from 'antd';
import { api, formatSlotMap, Schema } from './api';
import { errText } from './dialogs';
import { allowList, destinationProblem, EGRESS_HELP, EgressMode, egressSummary } from './egress';

type Group = Schema<'ResourceGroup'>;

const MODE_COLORS: Record<EgressMode, string> = { default: 'blue', closed: 'green', open: 'red' };

export default function ResourceGroups() {
  const { message } = AntApp.useApp();
  const [groups, setGroups] = useState<Group[]>([]);
  const [editing, setEditing] = useState<string | null>(null);
  const load = useCallback(() => {
    api('GET', '/resource-groups', { query: { all: true } }).then((r) => setGroups(r.resource_groups), (e) => message.error(errText(e)));
  }, [message]);
  useEffect(load, [load]);
  return (
    <>
      <Typography.Title level={4} style={{ marginTop: 24 }}>Resource groups</Typography.Title>
      <Table<Group>
        rowKey="name"
        size="small"
        dataSource={groups}
        pagination={false}
        data-testid="group-table"
        columns={[
          { title: 'Name', dataIndex: 'name' },
          { title: 'Agents', render: (_, g) => g.agents.length },
          { title: 'Free', render: (_, g) => formatSlotMap(g.free) },
          {
            // Whether its pending sessions may end running ones, and how gently.
            title: 'Preemption',
            render: (_, g) => (
              <Tag
                color={g.preemption.mode === 'off' ? 'default' : 'volcano'}
                title={g.preemption.mode === 'off' ? 'pending sessions never end running ones' : `grace ${g.preemption.grace_secs}s, minimum run time ${g.preemption.min_runtime_secs}s, ${g.preemption.interactive ? 'batch and interactive sessions' : 'batch sessions only'}`}
                data-testid={`group-preemption-${g.name}`}
              >
                {g.preemption.mode}
              </Tag>
            ),
          },
          {
            title: 'Egress',
            render: (_, g) =>
              editing === g.name ? (
                <EgressEditor
                  group={g}
                  onDone={(changed) => {
                    setEditing(null);
                    if (changed) {
                      message.success(`${g.name}: egress ${egressSummary(changed.egress)} for sessions launched from now on`);
                      load();
                    }
                  }}
                />
              ) : (
                <Space data-testid={`group-egress-${g.name}`}>
                  <Tag color={MODE_COLORS[g.egress.mode]} title={EGRESS_HELP[g.egress.mode]}>{g.egress.mode}</Tag>
                  {(g.egress.allow ?? []).join(', ')}
                  <Button size="small" onClick={() => setEditing(g.name)} data-testid={`group-egress-edit-${g.name}`}>Change</Button>
                </Space>
              ),
          },
        ]}
      />
    </>
  );
}

function EgressEditor({ group, onDone }: { group: Group; onDone: (changed: Group | null) => void }) {
  const [mode, setMode] = useState<EgressMode>(group.egress.mode);
  const [allow, setAllow] = useState((group.egress.allow ?? []).join(', '));
  const [error, setError] = useState<string | null>(null);
  const save = () => {
    const list = mode === 'open' ? [] : allowList(allow);
    const bad = list.map(destinationProblem).find((p) => p !== null);
    if (bad) {
      setError(bad);
      return;
    }
    api('PATCH', '/admin/resource-groups/{name}', { path: { name: group.name }, body: { egress: { mode, allow: list } } }).then(
      (g) => onDone(g),
      (e) => setError(errText(e)),
    );
  };
  return (
    <Space direction="vertical" size={4} style={{ width: 380 }}>
      <Select<EgressMode>
        value={mode}
        onChange={(m) => {
          setMode(m);
          setError(null);
        }}
        data-testid="egress-mode"
        options={(['default', 'closed', 'open'] as EgressMode[]).map((m) => ({ value: m, label: m }))}
        style={{ width: 160 }}
      />
      <Typography.Text type={mode === 'open' ? 'danger' : 'secondary'} style={{ fontSize: 12 }}>{EGRESS_HELP[mode]}</Typography.Text>
      {mode !== 'open' && (
        <Input
          placeholder="allowed: 10.0.0.0/8, 10.1.2.3:3128"
          value={allow}
          onChange={(e) => {
            setAllow(e.target.value);
            setError(null);
          }}
          status={error ? 'error' : ''}
          data-testid="egress-allow"
        />
      )}
      {error && <div style={{ color: '#cf1322', fontSize: 12 }} data-testid="egress-error">{error}</div>}
      <Space>
        <Button type="primary" size="small" onClick={save} data-testid="egress-save">Save</Button>
        <Button size="small" onClick={() => onDone(null)}>Cancel</Button>
      </Space>
    </Space>
  );
}
