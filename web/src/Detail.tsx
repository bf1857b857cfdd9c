// The session detail panel (seeds, "Session Detail Panel"): ID, user, status with its info
// and scheduling history buttons, type, environment, mounts, resources, times, agent, cluster
// mode, resource use as small charts, idle checks, kernels with their log buttons, rename;
// the control icons (apps, terminal, logs, commit, terminate) in its header.
import { EGRESS_HELP, egressSummary } from './egress';
import { useCallback, useEffect, useState } from 'react';
import { App as AntApp, Button, Descriptions, Drawer, Input, Popover, Space, Table, Tag, Tooltip, Typography } from 'antd';
import { ClockCircleOutlined, InfoCircleOutlined } from '@ant-design/icons';
import { api, elapsed, formatBytes, formatSlots, Schema } from './api';
import { errText, STATUS_COLOR } from './dialogs';
import Sparkline from './Sparkline';
import { deviceKind, deviceSeries } from './accel';
import * as sessionName from './validate';
import SessionControls from './SessionControls';
import { CHECKER_HELP, CHECKER_LABEL, formatDuration, IdleReport, LEVEL_COLOR, METRIC_LABEL, parseIdleChecks, remainingNow, reportLevel, utilizationLevel } from './idle';

type Sample = Schema<'StatSample'>;
type Session = Schema<'SessionInfo'>;
type Kernel = Schema<'Kernel'>;

const INFO_STATES = ['PENDING', 'TERMINATED', 'CANCELLED', 'ERROR'];

/** What the Info button next to a PENDING / TERMINATED / CANCELLED status says. */
function statusDetails(s: Session) {
  const p = s.pending;
  return (
    <div style={{ maxWidth: 420 }} data-testid="status-details">
      <div>
        <b>{s.status}</b>: {s.status_info ?? '-'}
      </div>
      {p && (
        <>
          <div>Waiting because: {p.reason}</div>
          <div>
            Queue position {p.queue_position} of {p.queue_length} in resource group {p.resource_group}
          </div>
          {p.short_of.length > 0 && (
            <div>
              Short of: {p.short_of.map(([r, n]) => `${r} on ${n} of ${p.agents_considered} agents`).join(', ')}
            </div>
          )}
          {p.estimated_start && <div>Estimated start: {new Date(p.estimated_start).toLocaleString()}</div>}
        </>
      )}
      {s.status !== 'PENDING' && (
        <>
          <div>Result: {s.result}</div>
          {s.exit_code !== null && s.exit_code !== undefined && <div>Exit code: {s.exit_code}</div>}
          {s.terminated_at && <div>Ended at: {new Date(s.terminated_at).toLocaleString()}</div>}
        </>
      )}
    </div>
  );
}

function IdleChecks({ reports, fetchedAt }: { reports: IdleReport[]; fetchedAt: number }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(t);
  }, []);
  if (!reports.length) return <Typography.Text type="secondary">No idle checker applies to this session.</Typography.Text>;
  return (
    <Space direction="vertical" size={2} data-testid="idle-checks">
      {reports.map((r) => {
        const left = formatDuration(remainingNow(r, fetchedAt, now));
        const when =
          r.remaining_time_type === 'grace_period'
            ? `grace period: ${left} left`
            : r.idle
              ? 'idle: ending now'
              : `${left} left (limit ${formatDuration(r.threshold)})`;
        if (r.checker !== 'utilization') {
          return (
            <div key={r.checker} data-testid={`idle-${r.checker}`}>
              {CHECKER_LABEL[r.checker] ?? r.checker}: {when}
            </div>
          );
        }
        const level = reportLevel(r);
        const tip = (
          <div data-testid="utilization-tooltip">
            {Object.entries(r.extra?.resources ?? {}).map(([m, [avg, threshold]]) => (
              <div key={m} style={{ color: LEVEL_COLOR[utilizationLevel(avg, threshold)] }}>
                {METRIC_LABEL[m] ?? m}: {avg === null ? 'no samples yet' : `${avg.toFixed(1)}%`} (threshold {threshold}%)
              </div>
            ))}
            <div>Thresholds combine with {(r.extra?.thresholds_check_operator ?? 'and').toUpperCase()} over {formatDuration(r.threshold)}.</div>
          </div>
        );
        return (
          <Tooltip key={r.checker} title={tip} color="#fff" overlayInnerStyle={{ color: '#333' }}>
            <span data-testid="idle-utilization" data-level={level} style={{ color: LEVEL_COLOR[level], cursor: 'help' }}>
              {CHECKER_LABEL.utilization}: {when}
            </span>
          </Tooltip>
        );
      })}
    </Space>
  );
}

/** One util and one memory chart per accelerator device; nothing for a session without. */
function DeviceUsage({ samples, kind }: { samples: Sample[]; kind: string }) {
  const devices = deviceSeries(samples);
  if (!devices.length) return null;
  const pct = (v: number) => `${v.toFixed(1)}%`;
  return (
    <div data-testid="device-charts">
      {devices.map((d) => (
        <div key={d.device} data-testid={`device-${d.device}`}>
          <Sparkline testId={`chart-device-${d.device}-util`} title={`${kind} ${d.device}`} max={100} format={pct} series={[{ label: 'util', values: d.util, color: '#389e0d' }]} />
          <Sparkline
            testId={`chart-device-${d.device}-mem`}
            title={`${kind} ${d.device} memory (of ${formatBytes(d.memTotal)})`}
            max={d.memTotal || undefined}
            format={formatBytes}
            series={[{ label: 'used', values: d.memUsed, color: '#d46b08' }]}
          />
        </div>
      ))}
    </div>
  );
}

function Usage({ samples, kind }: { samples: Sample[]; kind: string }) {
  const pct = (v: number) => `${v.toFixed(1)}%`;
  const rate = (v: number) => `${formatBytes(v)}/s`;
  return (
    <div data-testid="usage-charts">
      <Sparkline testId="chart-cpu" title="CPU" max={100} format={pct} series={[{ label: 'used', values: samples.map((s) => s.cpu_util), color: '#1677ff' }]} />
      <Sparkline testId="chart-mem" title="Memory" format={formatBytes} series={[{ label: 'used', values: samples.map((s) => s.mem_bytes), color: '#722ed1' }]} />
      <Sparkline
        testId="chart-net"
        title="Network I/O"
        format={rate}
        series={[
          { label: 'in', values: samples.map((s) => s.net_rx_bps), color: '#13c2c2' },
          { label: 'out', values: samples.map((s) => s.net_tx_bps), color: '#fa8c16' },
        ]}
      />
      <Sparkline
        testId="chart-io"
        title="Disk I/O"
        format={rate}
        series={[
          { label: 'read', values: samples.map((s) => s.io_read_bps), color: '#52c41a' },
          { label: 'write', values: samples.map((s) => s.io_write_bps), color: '#eb2f96' },
        ]}
      />
      <DeviceUsage samples={samples} kind={kind} />
    </div>
  );
}

export default function Detail({
  id,
  onClose,
  onRenamed,
  onLogs,
  onHistory,
  onApps,
}: {
  id: string;
  onClose: () => void;
  /** The session changed (renamed, terminated): the list is refreshed. */
  onRenamed: () => void;
  onLogs: (s: { id: string; name: string }, kernelId?: string) => void;
  onHistory: (s: { id: string; name: string }) => void;
  onApps: (s: { id: string; name: string }) => void;
}) {
  const { message } = AntApp.useApp();
  const [s, setS] = useState<Session | null>(null);
  const [stats, setStats] = useState<{ samples: Sample[]; idle: IdleReport[]; at: number }>({ samples: [], idle: [], at: Date.now() });
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState('');
  const [committing, setCommitting] = useState(false);
  const load = useCallback(() => {
    const path = { reference: id };
    api('GET', '/session/{reference}', { path }).then(
      (r) => {
        setS(r);
        // A conversion to an image changes what terminating does (see SessionControls).
        if (r.status !== 'RUNNING') return setCommitting(false);
        api('GET', '/session/{reference}/commit', { path }).then(
          (c) => setCommitting(c.status === 'ongoing'),
          () => setCommitting(false),
        );
      },
      (e) => message.error(errText(e)),
    );
    api('GET', '/session/{reference}/stats', { path }).then(
      (r) => setStats({ samples: r.samples, idle: parseIdleChecks(r.idle_checks), at: Date.now() }),
      () => undefined,
    );
  }, [id, message]);
  useEffect(() => {
    load();
    // Resource use and idle checks change as the session runs: follow them while open.
    const t = window.setInterval(load, 5000);
    return () => window.clearInterval(t);
  }, [load]);
  if (!s) return null;
  const nameProblem = editing ? sessionName.sessionName(name) ?? (name === '' ? 'Give a name.' : null) : null;
  const rename = async () => {
    if (nameProblem) return;
    try {
      await api('POST', '/session/{reference}/rename', { path: { reference: id }, query: { name } });
      setEditing(false);
      load();
      onRenamed();
    } catch (e) {
      message.error(errText(e));
    }
  };
  const ref = { id: s.id, name: s.name };
  const running: string | undefined = s.status_history.RUNNING;
  return (
    <Drawer
      open
      width={720}
      title="Session detail"
      onClose={onClose}
      extra={
        <SessionControls
          session={s}
          committing={committing}
          onApps={onApps}
          onLogs={(r) => onLogs(r)}
          onChanged={() => {
            load();
            onRenamed();
          }}
        />
      }
    >
      <Descriptions column={1} bordered size="small">
        <Descriptions.Item label="Name">
          {editing ? (
            <Space direction="vertical" size={0}>
              <Space.Compact>
                <Input data-testid="rename-input" status={nameProblem ? 'error' : ''} value={name} onChange={(e) => setName(e.target.value)} onPressEnter={rename} />
                <Button type="primary" onClick={rename} disabled={!!nameProblem} data-testid="rename-save">Save</Button>
                <Button onClick={() => setEditing(false)}>Cancel</Button>
              </Space.Compact>
              {nameProblem && <span style={{ color: '#cf1322', fontSize: 12 }} data-testid="rename-error">{nameProblem}</span>}
            </Space>
          ) : (
            <Space>
              <span data-testid="detail-name">{s.name}</span>
              <Button size="small" onClick={() => { setName(s.name); setEditing(true); }} data-testid="rename">Edit</Button>
            </Space>
          )}
        </Descriptions.Item>
        <Descriptions.Item label="ID">{s.id}</Descriptions.Item>
        <Descriptions.Item label="User">{s.user_email ?? s.access_key}</Descriptions.Item>
        <Descriptions.Item label="Status">
          <Space>
            <Tag color={STATUS_COLOR[s.status]} data-testid="detail-status">{s.status}</Tag>
            {committing && <Tag color="purple" data-testid="detail-committing">COMMITTING</Tag>}
            {INFO_STATES.includes(s.status) && (
              <Popover trigger="click" title="Status details" content={statusDetails(s)}>
                <Button size="small" type="text" icon={<InfoCircleOutlined />} data-testid="status-info" title="Why" />
              </Popover>
            )}
            <Button size="small" type="text" icon={<ClockCircleOutlined />} title="Scheduling history" onClick={() => onHistory(ref)} data-testid="detail-history" />
            <Typography.Text type="secondary">{s.status_info}</Typography.Text>
          </Space>
        </Descriptions.Item>
        {s.pending && (
          <Descriptions.Item label="Why pending">
            <span data-testid="why-pending">
              {s.pending.reason}
              {s.pending.queue_position ? ` (queue position ${s.pending.queue_position} of ${s.pending.queue_length})` : ''}
            </span>
          </Descriptions.Item>
        )}
        <Descriptions.Item label="Type">{s.type}</Descriptions.Item>
        <Descriptions.Item label="Environment">{s.image}</Descriptions.Item>
        <Descriptions.Item label="Mounts">
          <span data-testid="detail-mounts">{s.mounts.map(([n, path, perm]) => `${n} → ${path} (${perm})`).join(', ') || '-'}</span>
        </Descriptions.Item>
        <Descriptions.Item label="Resource allocation">
          {formatSlots(s.requested_slots)}
          {s.shmem ? `, shared memory ${formatBytes(s.shmem)}` : ''}
        </Descriptions.Item>
        <Descriptions.Item label="Reserved time">{s.created_at ? `${new Date(s.created_at).toLocaleString()} (waited ${running ? elapsed(s.created_at, running) : elapsed(s.created_at, s.terminated_at)})` : '-'}</Descriptions.Item>
        <Descriptions.Item label="Elapsed time">{running ? elapsed(running, s.terminated_at) : '-'}</Descriptions.Item>
        <Descriptions.Item label="Agent">{s.agent ?? '-'}</Descriptions.Item>
        <Descriptions.Item label="Cluster mode">{s.cluster_mode} (size {s.cluster_size})</Descriptions.Item>
        <Descriptions.Item label="Egress">
          <span data-testid="detail-egress" title={s.egress ? EGRESS_HELP[s.egress.mode] : undefined}>{egressSummary(s.egress)}</span>
        </Descriptions.Item>
        <Descriptions.Item label="Resource usage">
          <Usage samples={stats.samples} kind={deviceKind(s.requested_slots)} />
          <div style={{ fontSize: 12, color: '#555' }}>
            Through the app proxy and tunnels: {formatBytes(s.network.rx_bytes)} in, {formatBytes(s.network.tx_bytes)} out
            {s.network.last_activity ? `, last at ${new Date(s.network.last_activity).toLocaleTimeString()}` : ''}
          </div>
        </Descriptions.Item>
        <Descriptions.Item
          label={
            <Space size={4}>
              Idle checks
              <Popover
                trigger="click"
                title="Idle checks"
                content={
                  <div style={{ maxWidth: 420 }} data-testid="idle-help">
                    {CHECKER_HELP.map((h) => (
                      <p key={h.checker} data-testid={`idle-help-${h.checker}`}>
                        <b>{CHECKER_LABEL[h.checker]}</b>: {h.text}
                      </p>
                    ))}
                  </div>
                }
              >
                <Button size="small" type="text" icon={<InfoCircleOutlined />} aria-label="About the idle checks" data-testid="idle-info" />
              </Popover>
            </Space>
          }
        >
          {s.status === 'RUNNING' ? <IdleChecks reports={stats.idle} fetchedAt={stats.at} /> : <Typography.Text type="secondary">Only running sessions are checked.</Typography.Text>}
        </Descriptions.Item>
      </Descriptions>
      <Typography.Title level={5} style={{ marginTop: 16 }}>Kernels</Typography.Title>
      <Table<Kernel>
        size="small"
        rowKey="id"
        pagination={false}
        dataSource={s.kernels}
        data-testid="kernels"
        columns={[
          {
            title: 'Hostname',
            dataIndex: 'cluster_hostname',
            render: (h: string, k) => (
              <Space>
                {h}
                <Button size="small" onClick={() => onLogs(ref, k.id)} data-testid={`kernel-log-${h}`}>Log</Button>
              </Space>
            ),
          },
          { title: 'Role', dataIndex: 'cluster_role' },
          { title: 'Status', dataIndex: 'status', render: (x: string) => <Tag color={STATUS_COLOR[x]}>{x}</Tag> },
          { title: 'Kernel ID', dataIndex: 'id', render: (x: string) => <Typography.Text copyable={{ text: x }}>{x.slice(0, 8)}</Typography.Text> },
          { title: 'Container', dataIndex: 'container_id', render: (x: string | null) => (x ? x.slice(0, 12) : '-') },
        ]}
      />
    </Drawer>
  );
}
