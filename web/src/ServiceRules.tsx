// A service's auto-scaling rules (add a threshold or target rule, enable or disable, delete)
// and its autoscaler's decision log, newest first.
import { useCallback, useEffect, useState } from 'react';
import { Alert, App as AntApp, Button, Col, Divider, Form, Input, Modal, Popconfirm, Radio, Row, Select, Switch, Table, Tag, Typography } from 'antd';
import type { ButtonProps } from 'antd';
import { ApiError, formatTime } from './api';
import { dataProps } from './dataProps';
import { errText } from './dialogs';
import { COMPARATOR_SYMBOL, Decision, describeRule, Rule, ruleBody, rules as rulesApi } from './serving';
import * as v from './validate';

const REFRESH_MS = 3000;

const NEW_RULE: v.RuleDraft = {
  mode: 'threshold', metric_source: 'INFERENCE_FRAMEWORK', metric_name: 'inflight', threshold: '', comparator: 'GREATER_THAN',
  step_size: '1', target: '', min_replicas: '', max_replicas: '', cooldown_seconds: '300', scale_up_delay_seconds: '0',
  scale_down_delay_seconds: '60', priority: '0',
};

const METRIC_HINT: Record<string, string> = {
  cpu_util: 'CPU use of the replicas, percent, averaged',
  mem: 'memory use of the replicas, percent of what they were given, averaged',
  inflight: 'requests in flight per replica',
  requests_per_second: 'requests per second per replica',
  latency_ms: 'mean latency of the last requests, ms',
};

function RuleDialog({ id, onClose, onAdded }: { id: string; onClose: () => void; onAdded: () => void }) {
  const [d, setD] = useState<v.RuleDraft>(NEW_RULE);
  const [server, setServer] = useState<{ field: v.RuleField | null; msg: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const problems = v.rule(d);
  const set = <K extends v.RuleField>(k: K, val: v.RuleDraft[K]) => {
    setD((o) => ({ ...o, [k]: val }));
    setServer(null);
  };
  const shown = (f: v.RuleField) => problems[f] ?? (server?.field === f ? server.msg : undefined);
  const field = (f: v.RuleField, label: string, placeholder?: string, help?: string) => (
    <Form.Item label={label} validateStatus={shown(f) ? 'error' : undefined} help={shown(f) ? <span data-testid={`rule-${f}-error`}>{shown(f)}</span> : help}>
      <Input data-testid={`rule-${f}`} value={d[f] as string} placeholder={placeholder} onChange={(e) => set(f, e.target.value)} />
    </Form.Item>
  );
  const submit = async () => {
    if (Object.keys(problems).length) return;
    setBusy(true);
    try {
      await rulesApi.add(id, ruleBody(d));
      onAdded();
    } catch (e) {
      const msg = e instanceof ApiError ? e.message : String(e);
      setServer({ field: v.ruleProblemField(msg), msg });
    } finally {
      setBusy(false);
    }
  };
  const threshold = d.mode === 'threshold';
  return (
    <Modal
      open
      width={640}
      title="Add an auto-scaling rule"
      okText="Add"
      onOk={submit}
      onCancel={onClose}
      confirmLoading={busy}
      okButtonProps={dataProps<ButtonProps>({ disabled: Object.keys(problems).length > 0, 'data-testid': 'rule-ok' })}
    >
      <Form layout="vertical">
        <Form.Item
          label="Mode"
          help={threshold ? 'When the metric crosses the threshold, add (or with a negative step, remove) replicas.' : 'Keep the metric per replica near the target: replicas = ⌈value × replicas / target⌉ within min and max.'}
        >
          <Radio.Group value={d.mode} onChange={(e) => set('mode', e.target.value)}>
            <Radio.Button value="threshold"><span data-testid="rule-mode-threshold">Threshold</span></Radio.Button>
            <Radio.Button value="target"><span data-testid="rule-mode-target">Target</span></Radio.Button>
          </Radio.Group>
        </Form.Item>
        <Row gutter={12}>
          <Col span={12}>
            <Form.Item label="Metric source">
              <Select
                data-testid="rule-metric_source"
                value={d.metric_source}
                onChange={(src: v.RuleDraft['metric_source']) => setD((o) => ({ ...o, metric_source: src, metric_name: v.RULE_METRICS[src][0] }))}
                options={[{ value: 'INFERENCE_FRAMEWORK', label: 'Endpoint (requests)' }, { value: 'KERNEL', label: 'Replicas (kernels)' }]}
              />
            </Form.Item>
          </Col>
          <Col span={12}>
            <Form.Item label="Metric" validateStatus={shown('metric_name') ? 'error' : undefined} help={shown('metric_name') ?? METRIC_HINT[d.metric_name]}>
              <Select data-testid="rule-metric_name" value={d.metric_name} onChange={(m: string) => set('metric_name', m)} options={v.RULE_METRICS[d.metric_source].map((m) => ({ value: m, label: m }))} />
            </Form.Item>
          </Col>
        </Row>
        {threshold ? (
          <Row gutter={12}>
            <Col span={8}>
              <Form.Item label="Comparison" validateStatus={shown('comparator') ? 'error' : undefined} help={shown('comparator')}>
                <Select
                  data-testid="rule-comparator"
                  value={d.comparator ?? undefined}
                  onChange={(c: v.RuleDraft['comparator']) => set('comparator', c)}
                  options={Object.entries(COMPARATOR_SYMBOL).map(([k, s]) => ({ value: k, label: `${s} (${k.toLowerCase().replace(/_/g, ' ')})` }))}
                />
              </Form.Item>
            </Col>
            <Col span={8}>{field('threshold', 'Threshold', '5')}</Col>
            <Col span={8}>{field('step_size', 'Step (replicas)', '1 or -1')}</Col>
          </Row>
        ) : (
          <Row gutter={12}>
            <Col span={8}>{field('target', 'Target per replica', '4')}</Col>
            <Col span={8}>{field('scale_up_delay_seconds', 'Scale-up delay (s)')}</Col>
            <Col span={8}>{field('scale_down_delay_seconds', 'Scale-down delay (s)')}</Col>
          </Row>
        )}
        <Row gutter={12}>
          <Col span={6}>{field('min_replicas', 'Min replicas', threshold ? 'none' : '1')}</Col>
          <Col span={6}>{field('max_replicas', 'Max replicas', threshold ? 'none' : '4')}</Col>
          <Col span={6}>{field('cooldown_seconds', 'Cooldown (s)')}</Col>
          <Col span={6}>{field('priority', 'Priority', '0', 'Higher first')}</Col>
        </Row>
      </Form>
      {server && server.field === null && <Alert type="error" showIcon message={server.msg} data-testid="rule-error" />}
    </Modal>
  );
}

export default function ServiceRules({ id }: { id: string }) {
  const { message } = AntApp.useApp();
  const [rules, setRules] = useState<Rule[] | null>(null);
  const [decisions, setDecisions] = useState<Decision[]>([]);
  const [unavailable, setUnavailable] = useState<string | null>(null);
  const [adding, setAdding] = useState(false);
  const load = useCallback(() => {
    rulesApi.list(id).then(
      (r) => {
        setRules(r);
        setUnavailable(null);
      },
      (e) => setUnavailable(errText(e)),
    );
    rulesApi.decisions(id).then(setDecisions, () => undefined);
  }, [id]);
  useEffect(() => {
    load();
    const t = window.setInterval(load, REFRESH_MS);
    return () => window.clearInterval(t);
  }, [load]);
  const change = (r: Rule, enabled: boolean) =>
    rulesApi.change(id, r.id, { enabled }).then(load, (e) => message.error(errText(e)));
  const remove = (r: Rule) => rulesApi.remove(id, r.id).then(load, (e) => message.error(errText(e)));
  const ruleIndex = (rid: string) => (rules ?? []).findIndex((r) => r.id === rid);

  return (
    <>
      <Divider orientation="left">Auto-scaling rules</Divider>
      {unavailable && <Alert type="warning" showIcon message={`The rules cannot be read: ${unavailable}`} style={{ marginBottom: 8 }} />}
      <Button onClick={() => setAdding(true)} style={{ marginBottom: 8 }} data-testid="rule-add">+ Add rule</Button>
      <Table<Rule>
        size="small"
        rowKey="id"
        pagination={false}
        loading={rules === null && !unavailable}
        dataSource={rules ?? []}
        data-testid="svc-rules"
        locale={{ emptyText: 'No rules: the replica count stays as set' }}
        columns={[
          { title: '#', render: (_, r) => ruleIndex(r.id) + 1 },
          { title: 'Mode', dataIndex: 'mode', render: (m: string) => <Tag>{m}</Tag> },
          { title: 'Rule', render: (_, r) => <span data-testid={`rule-text-${ruleIndex(r.id) + 1}`}>{describeRule(r)}</span> },
          { title: 'Source', dataIndex: 'metric_source', render: (s: string) => (s === 'KERNEL' ? 'replicas' : 'endpoint') },
          { title: 'Cooldown', render: (_, r) => `${r.cooldown_seconds} s${r.mode === 'target' ? `, delays ${r.scale_up_delay_seconds}/${r.scale_down_delay_seconds} s` : ''}` },
          { title: 'Priority', dataIndex: 'priority' },
          { title: 'Last fired', dataIndex: 'last_triggered_at', render: formatTime },
          {
            title: 'Enabled',
            render: (_, r) => <Switch size="small" checked={r.enabled} onChange={(on) => change(r, on)} data-testid={`rule-enabled-${ruleIndex(r.id) + 1}`} />,
          },
          {
            title: '',
            render: (_, r) => (
              <Popconfirm title="Delete this rule?" okText="Delete" onConfirm={() => remove(r)}>
                <Button size="small" danger data-testid={`rule-delete-${ruleIndex(r.id) + 1}`}>Delete</Button>
              </Popconfirm>
            ),
          },
        ]}
      />
      <Divider orientation="left">Scaling decisions</Divider>
      <Table<Decision>
        size="small"
        rowKey="id"
        pagination={{ pageSize: 10, hideOnSinglePage: true }}
        dataSource={decisions}
        data-testid="svc-decisions"
        locale={{ emptyText: 'No decisions yet' }}
        columns={[
          { title: 'At', dataIndex: 'at', render: formatTime },
          { title: 'Rule', render: (_, x) => (ruleIndex(x.rule_id) >= 0 ? `#${ruleIndex(x.rule_id) + 1}` : <Typography.Text type="secondary">deleted</Typography.Text>) },
          { title: 'Metric', render: (_, x) => `${x.metric_name} = ${x.value == null ? 'no value' : Number(x.value.toFixed(3))}` },
          { title: 'Replicas', render: (_, x) => `${x.from_replicas} → ${x.to_replicas}` },
          { title: 'Applied', dataIndex: 'applied', render: (a: boolean) => <Tag color={a ? 'green' : 'default'}>{a ? 'applied' : 'not applied'}</Tag> },
          { title: 'Note', dataIndex: 'note' },
        ]}
      />
      {adding && (
        <RuleDialog
          id={id}
          onClose={() => setAdding(false)}
          onAdded={() => {
            setAdding(false);
            load();
          }}
        />
      )}
    </>
  );
}
