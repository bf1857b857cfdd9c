// A service's detail drawer: its state and URL, routes with health and counters, scaling,
// tokens (shown once), the replicas that failed to start, auto-scaling rules and their
// decisions, removal. Followed every few seconds while open.
import { useCallback, useEffect, useState } from 'react';
import { Alert, App as AntApp, Button, Descriptions, Divider, Drawer, Form, Input, Popconfirm, Space, Table, Tag, Typography } from 'antd';
import { api, ApiError, Schema } from './api';
import { errText } from './dialogs';
import { healthyRoutes, Route, ROUTE_COLOR, Service, SERVICE_COLOR } from './serving';
import ServiceRules from './ServiceRules';
import * as v from './validate';

const REFRESH_MS = 2500;

type ServiceError = Schema<'ServiceError'>;

/** An error of a route as the server records it: `{name, repr, src}`. */
function errorText(e: unknown): { name: string; repr: string; src: string } {
  const o = (e && typeof e === 'object' ? e : {}) as Record<string, unknown>;
  const s = (k: string) => (typeof o[k] === 'string' ? (o[k] as string) : '');
  return { name: s('name') || 'error', repr: s('repr') || JSON.stringify(e), src: s('src') || '-' };
}

function Scale({ service, onScaled }: { service: Service; onScaled: () => void }) {
  // What the user typed; until then (and after scaling), the count the service wants now,
  // which its auto-scaling rules may change.
  const [typed, setTyped] = useState<string | null>(null);
  const to = typed ?? String(service.desired_session_count);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const problem = v.replicas(to) ?? error;
  const scale = async () => {
    if (v.replicas(to)) return;
    setBusy(true);
    try {
      await api('POST', '/services/{id}/scale', { path: { id: service.endpoint_id }, body: { to: Number(to.trim()) } });
      setTyped(null);
      onScaled();
    } catch (e) {
      setError(errText(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Form.Item label="Replicas wanted" validateStatus={problem ? 'error' : undefined} help={problem ? <span data-testid="svc-scale-error">{problem}</span> : undefined}>
      <Space>
        <Input
          style={{ width: 100 }}
          data-testid="svc-scale-to"
          value={to}
          onChange={(e) => {
            setTyped(e.target.value);
            setError(null);
          }}
          onPressEnter={scale}
        />
        <Button onClick={scale} loading={busy} disabled={!!v.replicas(to)} data-testid="svc-scale">
          Scale
        </Button>
      </Space>
    </Form.Item>
  );
}

function Token({ service }: { service: Service }) {
  const [duration, setDuration] = useState('1d');
  const [token, setToken] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const problem = v.duration(duration) ?? error;
  const generate = async () => {
    if (v.duration(duration)) return;
    try {
      const r = await api('POST', '/services/{id}/token', { path: { id: service.endpoint_id }, body: { duration: duration.trim(), valid_until: null } });
      setToken(r.token);
    } catch (e) {
      setError(errText(e));
    }
  };
  return (
    <>
      <Form.Item label="Token lifetime" validateStatus={problem ? 'error' : undefined} help={problem ? <span data-testid="svc-token-error">{problem}</span> : 'Seconds, or 30m, 12h, 3d.'}>
        <Space>
          <Input style={{ width: 100 }} data-testid="svc-token-duration" value={duration} onChange={(e) => { setDuration(e.target.value); setError(null); }} />
          <Button onClick={generate} disabled={!!v.duration(duration)} data-testid="svc-token-generate">Generate token</Button>
        </Space>
      </Form.Item>
      {token && (
        <Alert
          type="success"
          closable
          onClose={() => setToken(null)}
          message="The token is shown only now: copy it."
          description={
            <>
              <Typography.Paragraph copyable={{ text: token }} style={{ wordBreak: 'break-all', fontFamily: 'monospace', marginBottom: 4 }} data-testid="svc-token">
                {token}
              </Typography.Paragraph>
              <Typography.Text type="secondary">Call the URL with the header Authorization: Bearer &lt;token&gt;.</Typography.Text>
            </>
          }
        />
      )}
    </>
  );
}

export default function ServiceDrawer({ id, onClose, onChanged, onRemoved }: { id: string; onClose: () => void; onChanged: () => void; onRemoved: () => void }) {
  const { message } = AntApp.useApp();
  const [s, setS] = useState<Service | null>(null);
  const [errors, setErrors] = useState<ServiceError[]>([]);
  const [loadError, setLoadError] = useState<string | null>(null);
  const load = useCallback(() => {
    api('GET', '/services/{id}', { path: { id } }).then(
      (x) => {
        setS(x);
        setLoadError(null);
      },
      (e) => setLoadError(errText(e)),
    );
    api('GET', '/services/{id}/errors', { path: { id } }).then((r) => setErrors(r.errors), () => undefined);
  }, [id]);
  useEffect(() => {
    load();
    const t = window.setInterval(load, REFRESH_MS);
    return () => window.clearInterval(t);
  }, [load]);
  const remove = async () => {
    try {
      await api('DELETE', '/services/{id}', { path: { id } });
      message.success(`${s?.name ?? id} is being removed`);
      onRemoved();
    } catch (e) {
      message.error(e instanceof ApiError ? e.message : String(e));
    }
  };

  return (
    <Drawer open width={900} title={s ? `Service ${s.name}` : 'Service'} onClose={onClose} data-testid="service-drawer">
      {loadError && <Alert type="error" showIcon message={loadError} style={{ marginBottom: 12 }} />}
      {s && (
        <>
          <Descriptions column={2} size="small" bordered>
            <Descriptions.Item label="Name"><span data-testid="svc-detail-name">{s.name}</span></Descriptions.Item>
            <Descriptions.Item label="Status">
              <Tag color={SERVICE_COLOR[s.status] ?? 'default'} data-testid="svc-detail-status">{s.status}</Tag>
            </Descriptions.Item>
            <Descriptions.Item label="URL" span={2}>
              {s.service_endpoint ? (
                <Typography.Text copyable data-testid="svc-detail-url">{s.service_endpoint}</Typography.Text>
              ) : (
                <Typography.Text type="secondary">assigned when a replica starts</Typography.Text>
              )}
            </Descriptions.Item>
            <Descriptions.Item label="Healthy routes"><span data-testid="svc-detail-healthy">{healthyRoutes(s)}</span> of {s.desired_session_count} wanted</Descriptions.Item>
            <Descriptions.Item label="Access">{s.is_public ? 'public' : 'token needed'}</Descriptions.Item>
            <Descriptions.Item label="Model folder">{s.model_id}</Descriptions.Item>
            <Descriptions.Item label="Definition">{s.model_definition_path ?? '-'} ({s.runtime_variant})</Descriptions.Item>
            <Descriptions.Item label="Failed starts">{s.retries}{s.retries >= 5 ? ' (given up)' : ''}</Descriptions.Item>
            <Descriptions.Item label="Refused requests">{s.refused_requests}</Descriptions.Item>
          </Descriptions>
          <Divider orientation="left">Routes</Divider>
          <Table<Route>
            size="small"
            rowKey="route_id"
            pagination={false}
            dataSource={s.active_routes}
            data-testid="svc-routes"
            locale={{ emptyText: 'No routes' }}
            columns={[
              { title: 'Route', dataIndex: 'route_id', render: (r: string) => <Typography.Text code>{r.slice(0, 8)}</Typography.Text> },
              { title: 'Session', dataIndex: 'session_id', render: (x?: string | null) => (x ? x.slice(0, 8) : '-') },
              { title: 'Health', dataIndex: 'status', render: (x: string) => <Tag color={ROUTE_COLOR[x] ?? 'default'}>{x}</Tag> },
              { title: 'Traffic', dataIndex: 'traffic_ratio' },
              { title: 'Requests', dataIndex: 'requests' },
              { title: 'Errors', dataIndex: 'errors' },
              { title: 'In flight', dataIndex: 'inflight' },
              { title: 'Mean latency', dataIndex: 'mean_latency_ms', render: (n: number) => `${n.toFixed(1)} ms` },
            ]}
          />
          <Divider orientation="left">Scale and access</Divider>
          <Form layout="vertical">
            <Scale service={s} onScaled={() => { load(); onChanged(); }} />
            <Token service={s} />
          </Form>
          <Divider orientation="left">Errors</Divider>
          <Table<ServiceError>
            size="small"
            rowKey="route_id"
            pagination={false}
            dataSource={errors}
            data-testid="svc-errors"
            locale={{ emptyText: 'No replica failed to start' }}
            columns={[
              { title: 'Route', dataIndex: 'route_id', render: (r: string) => r.slice(0, 8) },
              { title: 'Session', dataIndex: 'session_id', render: (x?: string | null) => (x ? x.slice(0, 8) : '-') },
              { title: 'Where', render: (_, e) => errorText(e.error).src },
              { title: 'Error', render: (_, e) => { const t = errorText(e.error); return <span><b>{t.name}</b>: {t.repr}</span>; } },
            ]}
          />
          <ServiceRules id={s.endpoint_id} />
          <Divider />
          <Popconfirm title={`Remove ${s.name}? Its replicas end and its URL stops answering.`} okText="Remove" onConfirm={remove}>
            <Button danger data-testid="svc-remove">Remove service</Button>
          </Popconfirm>
        </>
      )}
    </Drawer>
  );
}
