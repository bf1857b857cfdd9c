// The Serving page: the caller's model services (name, status, endpoint URL, healthy routes
// of those wanted, public or token), refreshed every few seconds while shown; "Create
// service"; a service's detail drawer.
import { useCallback, useEffect, useRef, useState } from 'react';
import { App as AntApp, Button, Space, Table, Tag, Tooltip, Typography } from 'antd';
import { api } from './api';
import { errText } from './dialogs';
import { healthyRoutes, Service, SERVICE_COLOR, ServiceItem } from './serving';
import ServiceCreate from './ServiceCreate';
import ServiceDrawer from './ServiceDrawer';

/** How often the list is fetched again while the page is shown. */
const REFRESH_MS = 3000;

/** A row: the list's item with its service's status and routes (the list has neither). */
export interface ServiceRow extends ServiceItem {
  info: Service | null;
}

export default function Serving() {
  const { message } = AntApp.useApp();
  const [rows, setRows] = useState<ServiceRow[]>([]);
  const [loading, setLoading] = useState(true);
  const [creating, setCreating] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  // Only the newest refresh fills the table (an older, slower one must not overwrite it).
  const seq = useRef(0);
  const failed = useRef(false);
  const refresh = useCallback(async () => {
    const mine = ++seq.current;
    try {
      const list = await api('GET', '/services');
      const infos = await Promise.all(list.map((s) => api('GET', '/services/{id}', { path: { id: s.id } }).catch(() => null)));
      if (mine !== seq.current) return;
      setRows(list.map((s, i) => ({ ...s, info: infos[i] })));
      failed.current = false;
    } catch (e) {
      // Said once, not every few seconds while the server is away.
      if (mine === seq.current && !failed.current) message.error(errText(e));
      failed.current = true;
    } finally {
      if (mine === seq.current) setLoading(false);
    }
  }, [message]);
  useEffect(() => {
    refresh();
    const t = window.setInterval(refresh, REFRESH_MS);
    return () => window.clearInterval(t);
  }, [refresh]);

  return (
    <>
      <Space style={{ marginBottom: 12, width: '100%', justifyContent: 'space-between' }}>
        <Typography.Title level={3} style={{ margin: 0 }}>Serving</Typography.Title>
        <Button type="primary" onClick={() => setCreating(true)} data-testid="service-create">
          Create service
        </Button>
      </Space>
      <Table<ServiceRow>
        rowKey="id"
        loading={loading}
        dataSource={rows}
        pagination={false}
        data-testid="service-table"
        locale={{ emptyText: 'No services yet: create one from a model folder.' }}
        columns={[
          { title: 'Name', dataIndex: 'name', render: (n: string, s) => <a onClick={() => setOpen(s.id)} data-testid={`service-${n}`}>{n}</a> },
          {
            title: 'Status',
            render: (_, s) =>
              s.info ? (
                <Tag color={SERVICE_COLOR[s.info.status] ?? 'default'} data-testid={`service-status-${s.name}`}>{s.info.status}</Tag>
              ) : (
                '-'
              ),
          },
          {
            title: 'URL',
            render: (_, s) =>
              s.service_endpoint ? (
                <Typography.Text copyable={{ text: s.service_endpoint }} data-testid={`service-url-${s.name}`}>
                  {s.service_endpoint}
                </Typography.Text>
              ) : (
                <Typography.Text type="secondary">not yet: assigned when a replica starts</Typography.Text>
              ),
          },
          {
            title: 'Healthy routes',
            render: (_, s) => (
              <span data-testid={`service-routes-${s.name}`}>
                {s.info ? healthyRoutes(s.info) : s.active_route_count} / {s.desired_session_count}
              </span>
            ),
          },
          {
            title: 'Access',
            render: (_, s) =>
              s.is_public ? (
                <Tag color="orange">public</Tag>
              ) : (
                <Tooltip title="Callers need a token (Authorization: Bearer …)">
                  <Tag>token</Tag>
                </Tooltip>
              ),
          },
        ]}
      />
      {creating && (
        <ServiceCreate
          onClose={() => setCreating(false)}
          onCreated={(s) => {
            setCreating(false);
            message.success(`${s.name} is starting`);
            refresh();
          }}
        />
      )}
      {open && (
        <ServiceDrawer
          id={open}
          onClose={() => setOpen(null)}
          onChanged={refresh}
          onRemoved={() => {
            setOpen(null);
            refresh();
          }}
        />
      )}
    </>
  );
}
