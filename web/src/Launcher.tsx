// The session launcher (seeds, "Start a new session"): its five pages, Recent History.
// Session type Inference makes a model service (the Serving page's), not a bare session: it
// asks for a model folder, and the launcher's environment, resources, cluster shape and
// project become the service's replicas' (serviceRequest.ts); the server's refusals are shown
// beside the field they name, and a created service is shown on the Serving page.
import FolderExplorer from './FolderExplorer';
import { useEffect, useMemo, useState } from 'react';
import {
  Alert, App as AntApp, Button, Card, Col, DatePicker, Descriptions, Divider, Form, Input, InputNumber, List, Modal, Radio,
  Row, Select, Slider, Space, Steps, Switch, Table, Tag, Typography,
} from 'antd';
import type { ButtonProps } from 'antd';
import dayjs from 'dayjs';
import { api, ApiError, Me, Schema } from './api';
import { body, completeSettings, CPU_STEP, DEFAULTS, HistoryEntry, isService, LaunchSettings, MEM_STEP, OLD_HISTORY_KEY, presetAccelerator, problems, STEPS, trimHistory, withImage } from './launch';
import { launchServiceBody, launchServiceProblem, ServiceField, settingField } from './serviceRequest';
import ModelFolderField from './ModelFolderField';
import { useNavigate } from './nav';
import { dataProps } from './dataProps';
import * as v from './validate';
import { accelOffer, accelOffers, formatAccel, toMilli } from './accel';
import NameDialog from './NameDialog';
import { defaultImage, findImage, minimumOf } from './images';
import { useImages } from './useImages';
import EnvironmentPicker from './EnvironmentPicker';
import { HelpLabel, HelpTopic } from './HelpButton';

type Folder = Schema<'Folder'>;

export default function Launcher({ me, initial, notify, onDone }: { me: Me; initial: LaunchSettings | null; notify: (t: string, id?: string) => void; onDone: () => void }) {
  const { message, notification } = AntApp.useApp();
  const [s, setS] = useState<LaunchSettings>(initial ? completeSettings(initial) : DEFAULTS);
  const navigate = useNavigate();
  const [step, setStep] = useState(initial ? 4 : 0);
  const [groups, setGroups] = useState<Schema<'ResourceGroup'>[]>([]);
  const [presets, setPresets] = useState<Schema<'Preset'>[]>([]);
  const [agents, setAgents] = useState<Schema<'Agent'>[]>([]);
  const [projects, setProjects] = useState<string[]>(['default']);
  const [folders, setFolders] = useState<Folder[]>([]);
  const [folderSearch, setFolderSearch] = useState('');
  const [creatingFolder, setCreatingFolder] = useState(false);
  // The folder opened in the explorer (the Data page's: sub-folders, upload, download, new folder).
  const [explore, setExplore] = useState<Folder | null>(null);
  // Recent History is the user's own, kept on the server (never in the shared browser).
  const [history, setHistoryState] = useState<HistoryEntry[]>([]);
  useEffect(() => {
    localStorage.removeItem(OLD_HISTORY_KEY);
    api('GET', '/user/launcher-history')
      .then((r) => setHistoryState(r.entries as unknown as HistoryEntry[]))
      .catch(() => setHistoryState([]));
  }, []);
  const setHistory = (h: HistoryEntry[]) => {
    const kept = trimHistory(h);
    setHistoryState(kept);
    api('PUT', '/user/launcher-history', { body: { entries: kept } }).catch(() => undefined);
  };
  const [showHistory, setShowHistory] = useState(false);
  const [renaming, setRenaming] = useState<HistoryEntry | null>(null);
  const [confirmNoFolder, setConfirmNoFolder] = useState(false);
  const [launching, setLaunching] = useState(false);
  const [serverError, setServerError] = useState<string | null>(null);
  // The server's refusal of a model service (Inference), beside the field it names.
  const [serviceError, setServiceError] = useState<{ field: ServiceField | null; msg: string } | null>(null);
  const [assignOwner, setAssignOwner] = useState(!!(initial && initial.ownerAccessKey));
  const set = <K extends keyof LaunchSettings>(k: K, val: LaunchSettings[K]) => {
    setS((o) => ({ ...o, [k]: val }));
    // Changing what the server refused clears its refusal.
    setServiceError((e) => (e && (e.field === null || e.field === settingField(k)) ? null : e));
  };
  const serviceProblem = (f: ServiceField) => (serviceError?.field === f ? serviceError.msg : null);
  // For changes made without `set` (an environment, a preset: several settings at once).
  const clearServiceError = (...fields: ServiceField[]) => setServiceError((e) => (e && (e.field === null || fields.includes(e.field)) ? null : e));
  const service = isService(s);
  const { images, error: imagesError } = useImages();
  // Once the catalogue is there, the chosen environment is named by its canonical name (an
  // alias such as `python` is resolved); the default one is the catalogue's.
  useEffect(() => {
    if (!images) return;
    setS((o) => {
      const found = findImage(images, o.environment);
      if (found) return found.canonical_name === o.environment ? o : { ...o, environment: found.canonical_name };
      const d = o.environment === DEFAULTS.environment ? defaultImage(images) : undefined;
      return d ? withImage(o, d) : o;
    });
  }, [images]);

  useEffect(() => {
    api('GET', '/resource-groups').then((r) => setGroups(r.resource_groups), () => undefined);
    api('GET', '/resource/presets').then((r) => setPresets(r.presets), () => undefined);
    api('GET', '/agents').then((r) => setAgents(r.agents), () => undefined);
    api('GET', '/projects').then((r) => setProjects(r.projects.map((p) => p.name)), () => undefined);
    loadFolders();
  }, []);
  const loadFolders = () => api('GET', '/folders').then(setFolders, () => undefined);

  const max = useMemo(() => {
    let cpu = 0;
    let mem = 0;
    for (const a of agents.filter((a) => a.scaling_group === s.group)) {
      cpu = Math.max(cpu, Number(a.capacity.cpu));
      mem = Math.max(mem, Number(a.capacity.mem) / 2 ** 30);
    }
    return { cpu: cpu || 64, memGiB: Math.floor(mem * 100) / 100 || 256 };
  }, [agents, s.group]);
  // AI accelerators: the slot the group's agents (the chosen agent's) offer, its unit and
  // step, up to the most one agent has free.
  const accelKinds = useMemo(() => accelOffers(agents, s.group, s.agent), [agents, s.group, s.agent]);
  const accel = useMemo(() => accelKinds.find((o) => o.slot === s.accelSlot) ?? accelKinds[0] ?? null, [accelKinds, s.accelSlot]);
  const groupAccel = useMemo(() => accelOffer(agents, s.group, null, s.accelSlot), [agents, s.group, s.accelSlot]);
  const accelProblem = v.accelerator(s.accelerator, accel);
  const accelText = s.accelerator && accel ? formatAccel(s.accelerator, accel.slot) : s.accelerator ? `${s.accelerator} (no accelerator in this resource group)` : '-';
  // What is launched: the free reference if given, else the chosen environment.
  const target = images ? findImage(images, s.image.trim() || s.environment) : undefined;
  const imageCheck = {
    min: minimumOf(target),
    problem: images?.length && !s.image.trim() && !target ? `The image ${s.environment} is not in the catalogue (any more): choose an environment.` : null,
  };
  const below = v.imageMinimum(s, imageCheck.min);
  const all = problems(s, max, accel, imageCheck);
  const stepProblems = (i: number) => all.filter((p) => p.step === i);

  const searchOwner = async () => {
    try {
      const r = await api('GET', '/admin/users/{email}', { path: { email: s.ownerEmail } });
      set('ownerAccessKey', r.access_key);
    } catch (e) {
      set('ownerAccessKey', null);
      message.error(e instanceof ApiError ? e.message : String(e));
    }
  };

  const applyPreset = (name: string | null) => {
    set('preset', name);
    const p = presets.find((x) => x.name === name);
    if (p) {
      clearServiceError('cpu', 'mem');
      // The kind of accelerator the preset names, where the group offers it.
      const kind = accelKinds.find((o) => Number(p.resource_slots[o.slot] ?? 0) > 0)?.slot ?? accel?.slot ?? null;
      setS((o) => ({
        ...o,
        preset: name,
        cpu: Number(p.resource_slots.cpu),
        memGiB: Number(p.resource_slots.mem) / 2 ** 30,
        // The server sends null for a preset without shared memory (the document says a string).
        shmemGiB: p.shared_memory ? Number(p.shared_memory) / 2 ** 30 : o.shmemGiB,
        // Its GPU too: the slider and the Confirm card show it.
        accelSlot: kind,
        accelerator: presetAccelerator(p.resource_slots as Record<string, string | undefined>, kind),
      }));
    }
  };

  // Inference: a model service through the Serving page's API, then that page.
  const launchService = async () => {
    setLaunching(true);
    setServerError(null);
    setServiceError(null);
    try {
      const r = await api('POST', '/services', { body: launchServiceBody(s, accel?.slot ?? null) });
      const entry: HistoryEntry = { id: `${Date.now()}`, label: s.name || r.name, pinned: false, at: new Date().toISOString(), settings: s };
      setHistory([entry, ...history]);
      notify(`Model service ${r.name} created: its replicas are starting`);
      message.success(`Model service ${r.name} is starting: see it on the Serving page`);
      navigate('serving');
    } catch (e) {
      const p = launchServiceProblem(e instanceof ApiError ? e.message : String(e));
      setServiceError({ field: p.field, msg: p.msg });
      setStep(p.step);
    } finally {
      setLaunching(false);
    }
  };

  const launch = async () => {
    if (service) return launchService();
    setConfirmNoFolder(false);
    setLaunching(true);
    setServerError(null);
    try {
      const r = await api('POST', '/session', { body: body(s, accel?.slot ?? null) });
      const id = r.sessionId;
      const name = r.sessionName;
      const entry: HistoryEntry = { id: `${Date.now()}`, label: s.name || name, pinned: false, at: new Date().toISOString(), settings: s };
      setHistory([entry, ...history]);
      notify(`Session ${name} created (${r.status})`, id);
      // The same notification turns into the RUNNING one (apps, terminal, logs) once the
      // session starts (the Sessions page follows the event stream).
      const key = `session-${id}`;
      notification.open({
        key,
        placement: 'bottomRight',
        message: `Session ${name} created`,
        description: <Tag color="gold" data-testid="toast-status">{r.status}</Tag>,
        btn: (
          <Button size="small" danger onClick={() => { notification.destroy(key); api('DELETE', '/session/{reference}', { path: { reference: id } }).catch(() => undefined); }}>
            Terminate
          </Button>
        ),
      });
      onDone();
    } catch (e) {
      setServerError(e instanceof ApiError ? e.message : String(e));
      setStep(4);
    } finally {
      setLaunching(false);
    }
  };

  const envRows = (
    <Space direction="vertical" style={{ width: '100%' }}>
      {s.env.map((e, i) => (
        <Space key={i} align="start">
          <Form.Item validateStatus={v.envName(e.key) ? 'error' : ''} help={v.envName(e.key)} style={{ marginBottom: 0 }}>
            <Input
              placeholder="Variable"
              data-testid={`env-key-${i}`}
              value={e.key}
              onChange={(ev) => set('env', s.env.map((x, j) => (j === i ? { ...x, key: ev.target.value } : x)))}
            />
          </Form.Item>
          <Input
            placeholder="Value"
            data-testid={`env-value-${i}`}
            value={e.value}
            onChange={(ev) => set('env', s.env.map((x, j) => (j === i ? { ...x, value: ev.target.value } : x)))}
          />
          <Button onClick={() => set('env', s.env.filter((_, j) => j !== i))}>−</Button>
        </Space>
      ))}
      <Button onClick={() => set('env', [...s.env, { key: '', value: '' }])} data-testid="env-add">
        + Add environment variables
      </Button>
    </Space>
  );

  const page = [
    // 1. Session type
    <Form layout="vertical" key="0">
      <Form.Item label="Session type">
        <Radio.Group
          value={s.type}
          onChange={(e) => {
            set('type', e.target.value);
            setServiceError(null);
          }}
        >
          <Radio.Button value="interactive" data-testid="type-interactive">Interactive</Radio.Button>
          <Radio.Button value="batch" data-testid="type-batch">Batch</Radio.Button>
          <Radio.Button value="inference" data-testid="type-inference">Inference</Radio.Button>
        </Radio.Group>
      </Form.Item>
      {service && (
        <Alert
          type="info"
          showIcon
          style={{ marginBottom: 16 }}
          data-testid="inference-note"
          message="Inference creates a model service"
          description="Its replicas run the environment and resources chosen here and serve the model folder's model at an endpoint, with health checks; follow it on the Serving page."
        />
      )}
      {service ? (
        <Form.Item
          label="Service name (optional)"
          validateStatus={v.serviceName(s.name) || serviceProblem('name') ? 'error' : ''}
          help={(v.serviceName(s.name) || serviceProblem('name')) && <span data-testid="session-name-error">{v.serviceName(s.name) ?? serviceProblem('name')}</span>}
        >
          <Input data-testid="session-name" value={s.name} onChange={(e) => set('name', e.target.value)} placeholder="4–64 letters, digits, '_' and '-'" />
        </Form.Item>
      ) : (
        <Form.Item label="Session name (optional)" validateStatus={v.sessionName(s.name) ? 'error' : ''} help={v.sessionName(s.name) && <span data-testid="session-name-error">{v.sessionName(s.name)}</span>}>
          <Input data-testid="session-name" value={s.name} onChange={(e) => set('name', e.target.value)} placeholder="4–64 letters, digits, '-', '_', '.'" />
        </Form.Item>
      )}
      {service && <ModelFolderField value={s.model} onChange={(m) => set('model', m)} problem={serviceProblem('model')} testPrefix="launch" />}
      {s.type === 'batch' && (
        <>
          <Form.Item label="Startup command" validateStatus={v.batch(s.startupCommand, s.timeoutSecs) ? 'error' : ''} help={v.batch(s.startupCommand, s.timeoutSecs)}>
            <Input.TextArea data-testid="startup-command" value={s.startupCommand} onChange={(e) => set('startupCommand', e.target.value)} />
          </Form.Item>
          <Form.Item label="Start time (not before)">
            <DatePicker showTime value={s.startsAt ? dayjs(s.startsAt) : null} onChange={(d) => set('startsAt', d ? d.toISOString() : null)} />
          </Form.Item>
          <Form.Item label="Timeout duration (seconds)">
            <InputNumber min={1} value={s.timeoutSecs ?? undefined} onChange={(n) => set('timeoutSecs', n ?? null)} />
          </Form.Item>
        </>
      )}
      {me.is_admin && (
        <Form.Item label="Assign a session owner">
          <Space direction="vertical">
            <Switch
              checked={assignOwner}
              data-testid="owner-toggle"
              onChange={(on) => {
                setAssignOwner(on);
                if (!on) setS((o) => ({ ...o, ownerEmail: '', ownerAccessKey: null }));
              }}
            />
            {assignOwner && (
              <Space>
                <Input placeholder="user email" data-testid="owner-email" value={s.ownerEmail} onChange={(e) => setS((o) => ({ ...o, ownerEmail: e.target.value, ownerAccessKey: null }))} onPressEnter={searchOwner} />
                <Button onClick={searchOwner} data-testid="owner-search">Search</Button>
                {s.ownerAccessKey && <Tag color="green" data-testid="owner-access-key">{s.ownerAccessKey}</Tag>}
              </Space>
            )}
          </Space>
        </Form.Item>
      )}
      <Form.Item label="Project">
        <Select value={s.project} onChange={(p) => set('project', p)} options={projects.map((p) => ({ value: p, label: p }))} style={{ width: 240 }} />
      </Form.Item>
      <Form.Item label="Resource group">
        <Select value={s.group} onChange={(g) => set('group', g)} options={groups.map((g) => ({ value: g.name, label: g.name }))} style={{ width: 240 }} />
      </Form.Item>
    </Form>,
    // 2. Environments & Resource allocation
    <Form layout="vertical" key="1">
      <EnvironmentPicker
        images={images}
        error={imagesError}
        value={s.environment}
        onChange={(ref) => {
          const i = images && findImage(images, ref);
          // The image's minimum resources are applied at once: the sliders are raised to them.
          setS((o) => (i ? withImage(o, i) : { ...o, environment: ref }));
          clearServiceError('image', 'cpu', 'mem');
        }}
        image={s.image}
        onImage={(t) => set('image', t)}
        minimum={imageCheck.min}
      />
      {serviceProblem('image') && <Alert type="error" showIcon style={{ marginBottom: 16 }} message={serviceProblem('image')} data-testid="launch-image-error" />}
      <Form.Item label="Environment variables">{envRows}</Form.Item>
      <Form.Item label="Resource presets">
        <Select data-testid="preset" allowClear value={s.preset} onChange={(p) => applyPreset(p ?? null)} options={presets.map((p) => ({ value: p.name, label: p.name }))} style={{ width: 240 }} />
      </Form.Item>
      {(
        [
          ['CPU', 'cpu', CPU_STEP, max.cpu, CPU_STEP, 'cores'],
          ['Memory', 'memGiB', MEM_STEP, max.memGiB, MEM_STEP, 'GiB'],
          ['Shared memory', 'shmemGiB', 0, s.memGiB, 0.0625, 'GiB'],
        ] as [string, 'cpu' | 'memGiB' | 'shmemGiB', number, number, number, string][]
      ).map(([label, key, lo, hi, stepSize, unit]) => {
        // Below the image's minimum, or (Inference) what the server refused of it.
        const problem = (key !== 'shmemGiB' && below[key]) || (service && key !== 'shmemGiB' ? serviceProblem(key === 'cpu' ? 'cpu' : 'mem') : null);
        return (
        <Form.Item
          label={<HelpLabel text={`${label} (${unit})`} topic={key as HelpTopic} />}
          key={key}
          validateStatus={problem ? 'error' : undefined}
          help={problem ? <span data-testid={`res-${key}-error`}>{problem}</span> : undefined}
        >
          <Row gutter={12}>
            <Col span={16}>
              <Slider min={lo} max={Math.max(hi, lo)} step={stepSize} value={s[key]} onChange={(n) => set(key, n)} />
            </Col>
            <Col span={8}>
              <InputNumber data-testid={`res-${key}`} min={lo} max={Math.max(hi, lo)} step={stepSize} value={s[key]} onChange={(n) => set(key, Number(n ?? 0))} />
            </Col>
          </Row>
        </Form.Item>
        );
      })}
      <Form.Item
        label={<HelpLabel text={`AI accelerator (${accel ? accel.unit : 'none in this resource group'})`} topic="accelerator" />}
        validateStatus={accelProblem ? 'error' : ''}
        help={accelProblem ?? (accel ? `Up to ${formatAccel(accel.max, accel.slot)} free on one agent, in steps of ${formatAccel(accel.step, accel.slot)}.` : undefined)}
      >
        {accelKinds.length > 1 && (
          // A kernel takes one kind: whole GPUs, shares or one MIG profile's instances.
          <Select
            data-testid="res-accelerator-kind"
            value={accel?.slot}
            onChange={(k) => set('accelSlot', k)}
            options={accelKinds.map((o) => ({ value: o.slot, label: o.unit }))}
            style={{ width: 240, marginBottom: 8 }}
          />
        )}
        <Row gutter={12}>
          <Col span={16}>
            <Slider
              min={0}
              max={Math.max(accel?.max ?? 0, 0)}
              step={accel?.step ?? 1}
              disabled={!accel}
              value={s.accelerator}
              onChange={(n) => set('accelerator', toMilli(n) / 1000)}
              tooltip={{ formatter: (n) => (accel && n !== undefined ? formatAccel(n, accel.slot) : n) }}
            />
          </Col>
          <Col span={8}>
            <InputNumber
              data-testid="res-accelerator"
              min={0}
              max={accel?.max}
              step={accel?.step ?? 1}
              // Whole GPUs are not rounded: 1.5 stays, and the field says why it is refused.
              precision={accel && !accel.whole ? accel.precision : undefined}
              disabled={!accel && !s.accelerator}
              addonAfter={accel?.unit}
              value={s.accelerator}
              onChange={(n) => set('accelerator', Number(n ?? 0))}
            />
          </Col>
        </Row>
      </Form.Item>
      {stepProblems(1).map((p, i) => (
        <Alert key={i} type="error" showIcon message={p.text} style={{ marginBottom: 8 }} />
      ))}
      {service ? (
        // A model service's replicas (each an inference session); the scheduler places them.
        <Form.Item
          label={`Replicas (0–${v.MAX_REPLICAS})`}
          validateStatus={v.replicas(String(s.replicas)) || serviceProblem('replicas') ? 'error' : undefined}
          help={
            v.replicas(String(s.replicas)) || serviceProblem('replicas') ? (
              <span data-testid="replicas-error">{v.replicas(String(s.replicas)) ?? serviceProblem('replicas')}</span>
            ) : (
              'Each replica runs the resources above; the service is HEALTHY when all of them pass their health checks.'
            )
          }
        >
          {/* No min or max: a number out of range is said beside the field, not silently changed. */}
          <InputNumber data-testid="replicas" precision={0} value={s.replicas} onChange={(n) => set('replicas', Number(n ?? 0))} />
        </Form.Item>
      ) : (
      <Row gutter={16}>
        <Col span={8}>
          <Form.Item label={<HelpLabel text="Sessions" topic="sessions" />}>
            <InputNumber min={1} max={100} value={s.count} onChange={(n) => set('count', Number(n ?? 1))} />
          </Form.Item>
        </Col>
        <Col span={16}>
          <Form.Item
            label="Select agent"
            extra={s.agent && s.clusterMode === 'multi-node' && s.clusterSize > 1 ? 'Multi node: main1 runs on this agent; the other containers are spread over the group.' : undefined}
          >
            <Select
              allowClear
              placeholder="Automatic (the scheduler chooses)"
              value={s.agent ?? undefined}
              onChange={(a) => set('agent', a ?? null)}
              options={agents
                .filter((a) => a.scaling_group === s.group)
                .map((a) => ({
                  value: a.id,
                  // An agent that is not alive, or drained, takes nothing new: shown, not offered.
                  disabled: a.status !== 'ALIVE' || a.drained,
                  label: `${a.id}${a.remote ? ` (${a.address.split(':')[0]})` : ''} — free ${a.free?.cpu ?? '?'} CPU, ${(Number(a.free?.mem ?? 0) / 2 ** 30).toFixed(1)} GiB${groupAccel ? `, ${formatAccel(a.free[groupAccel.slot] ?? 0, groupAccel.slot)}` : ''}${a.status !== 'ALIVE' ? ` — ${a.status.toLowerCase()}` : a.drained ? ' — drained' : ''}`,
                }))}
            />
          </Form.Item>
        </Col>
      </Row>
      )}
      <Row gutter={16}>
        <Col span={12}>
          <Form.Item label="Cluster mode" help={s.clusterMode === 'multi-node' ? 'Multi node: the containers are spread over the nodes of the resource group, joined by a network of their own.' : 'Single node: every container of the session on one node.'}>
            <Radio.Group value={s.clusterMode} onChange={(e) => set('clusterMode', e.target.value)}>
              <Radio value="single-node" data-testid="cluster-single">Single node</Radio>
              <Radio value="multi-node" data-testid="cluster-multi">Multi node</Radio>
            </Radio.Group>
          </Form.Item>
        </Col>
        <Col span={12}>
          <Form.Item
            label="Cluster size"
            validateStatus={v.clusterSize(s.clusterSize) ? 'error' : ''}
            help={v.clusterSize(s.clusterSize) ?? (s.clusterSize > 1 ? `${s.clusterSize} containers (main1, sub1 … sub${s.clusterSize - 1}), each with the resources above; they reach each other by hostname and ssh.` : undefined)}
          >
            <InputNumber data-testid="cluster-size" min={1} max={64} value={s.clusterSize} onChange={(n) => set('clusterSize', Number(n ?? 1))} />
          </Form.Item>
        </Col>
      </Row>
      <Form.Item label="High-performance computing optimizations (default: the number of CPU cores)">
        <Space>
          OpenMP threads <InputNumber min={1} placeholder={String(Math.ceil(s.cpu))} value={s.ompThreads ?? undefined} onChange={(n) => set('ompThreads', n ?? null)} />
          OpenBLAS threads <InputNumber min={1} placeholder={String(Math.ceil(s.cpu))} value={s.openblasThreads ?? undefined} onChange={(n) => set('openblasThreads', n ?? null)} />
        </Space>
      </Form.Item>
    </Form>,
    // 3. Data & Storage
    service ? (
      <div key="2">
        <Alert
          type="info"
          showIcon
          data-testid="inference-mounts"
          message={s.model ? `The model folder ${s.model} is mounted read-only at /models in every replica.` : 'Choose a model folder on the first page: it is mounted read-only at /models in every replica.'}
          description="A model service mounts its model folder only: keep what the model needs in it."
        />
      </div>
    ) : (
    <div key="2">
      <Space style={{ marginBottom: 12 }}>
        <Input.Search placeholder="Search folders" allowClear value={folderSearch} onChange={(e) => setFolderSearch(e.target.value)} />
        <Button onClick={() => setCreatingFolder(true)} data-testid="folder-add">+</Button>
      </Space>
      <Table<Folder>
        size="small"
        rowKey="name"
        pagination={false}
        dataSource={folders.filter((f) => f.name.includes(folderSearch))}
        rowSelection={{
          selectedRowKeys: s.mounts,
          onChange: (keys) => set('mounts', keys as string[]),
          getCheckboxProps: (f) => dataProps({ 'data-testid': `mount-${f.name}` }),
        }}
        columns={[
          {
            title: 'Folder',
            dataIndex: 'name',
            render: (n: string, f) => (
              <a data-testid={`launcher-folder-${n}`} onClick={() => setExplore(f)}>{n}</a>
            ),
          },
          { title: 'Permission', dataIndex: 'permission' },
          { title: 'Owner', render: (_, f) => (f.group ? `project ${f.group}` : 'you') },
        ]}
      />
      {creatingFolder && (
        <NameDialog
          title="Create a folder"
          placeholder="folder name"
          okText="Create"
          testId="new-folder"
          check={v.folderName}
          onSubmit={async (name) => {
            await api('POST', '/folders', { body: { name, permission: 'rw' } });
            await loadFolders();
            // A new folder is selected for mounting at once.
            setS((o) => ({ ...o, mounts: [...o.mounts, name] }));
          }}
          onClose={() => setCreatingFolder(false)}
        />
      )}
      {explore && <FolderExplorer folder={explore} onClose={() => setExplore(null)} onChanged={loadFolders} />}
    </div>
    ),
    // 4. Network
    <Form layout="vertical" key="3">
      {service ? (
        <Form.Item label="Open to public" help={s.openToPublic ? 'Anyone who knows the endpoint URL can call it.' : 'Callers need a token (Generate token in the service panel on the Serving page).'}>
          <Switch data-testid="launch-public" checked={s.openToPublic} onChange={(p) => set('openToPublic', p)} />
        </Form.Item>
      ) : (
      <Form.Item label={<HelpLabel text="Preopen ports (1024–65535, separated by commas or spaces)" topic="preopen" />} validateStatus={v.preopenPorts(s.preopen).problem ? 'error' : ''} help={v.preopenPorts(s.preopen).problem}>
        <Input data-testid="preopen" value={s.preopen} onChange={(e) => set('preopen', e.target.value)} placeholder="8080, 8081" />
      </Form.Item>
      )}
    </Form>,
    // 5. Confirm and Launch
    <div key="4">
      {(all.length > 0 || serverError || serviceError) && (
        <Alert
          type="error"
          showIcon
          data-testid="error-card"
          message={service ? 'The model service cannot be created yet' : 'The session cannot be launched yet'}
          description={
            <ul style={{ margin: 0 }}>
              {all.map((p, i) => (
                <li key={i}>{STEPS[p.step]}: {p.text}</li>
              ))}
              {serverError && <li>{serverError}</li>}
              {serviceError && <li data-testid="service-error">{serviceError.msg}</li>}
            </ul>
          }
          style={{ marginBottom: 16 }}
        />
      )}
      <Row gutter={[16, 16]}>
        {(service
          ? [
              [0, 'Session type', [['Type', 'inference: a model service'], ['Service name', s.name || '(random)'], ['Model folder', s.model || '-'], ['Project', s.project], ['Resource group', s.group]]],
              [1, 'Environments & Resource allocation', [['Image', s.image || s.environment], ['Resources per replica', `${s.cpu} CPU, ${s.memGiB} GiB, shm ${s.shmemGiB} GiB`], ['AI accelerator', accelText], ['Environment variables', s.env.map((e) => `${e.key}=${e.value}`).join(', ') || '-'], ['Replicas', String(s.replicas)], ['Cluster', s.clusterSize > 1 ? `${s.clusterSize} containers, ${s.clusterMode} (resources per container)` : 'one container']]],
              [2, 'Data & Storage', [['Model folder', s.model ? `${s.model} → /models (read-only)` : '-']]],
              [3, 'Network', [['Endpoint', s.openToPublic ? 'open to public' : 'callers need a token']]],
            ]
          : [
          [0, 'Session type', [['Type', s.type], ['Name', s.name || '(random)'], ['Project', s.project], ['Resource group', s.group], ...(s.type === 'batch' ? [['Startup command', s.startupCommand]] : [])]],
          [1, 'Environments & Resource allocation', [['Image', s.image || s.environment], ['Resources', `${s.cpu} CPU, ${s.memGiB} GiB, shm ${s.shmemGiB} GiB`], ['AI accelerator', accelText], ['Environment variables', s.env.map((e) => `${e.key}=${e.value}`).join(', ') || '-'], ['Sessions', String(s.count)], ['Cluster', s.clusterSize > 1 ? `${s.clusterSize} containers, ${s.clusterMode} (resources per container)` : 'one container']]],
          [2, 'Data & Storage', [['Mounted folders', s.mounts.join(', ') || '-']]],
          [3, 'Network', [['Preopen ports', s.preopen || '-']]],
        ]).map(([i, title, rows]) => (
          <Col span={12} key={i as number}>
            <Card size="small" title={title as string} extra={<Button size="small" onClick={() => setStep(i as number)} data-testid={`edit-${i}`}>Edit</Button>}>
              <Descriptions column={1} size="small">
                {(rows as string[][]).map(([k, val]) => (
                  <Descriptions.Item label={k} key={k}>{val}</Descriptions.Item>
                ))}
              </Descriptions>
            </Card>
          </Col>
        ))}
      </Row>
      <Divider />
      <Button
        type="primary"
        size="large"
        data-testid="launch"
        loading={launching}
        disabled={all.length > 0}
        onClick={() => (!service && s.mounts.length === 0 ? setConfirmNoFolder(true) : launch())}
      >
        {service ? 'Create model service' : 'Launch'}
      </Button>
      <Modal open={confirmNoFolder} title="No folders are mounted" okText="Start" onOk={launch} onCancel={() => setConfirmNoFolder(false)} okButtonProps={dataProps<ButtonProps>({ 'data-testid': 'no-folder-start' })}>
        Files outside mounted folders are deleted when the session ends. Start anyway?
      </Modal>
    </div>,
  ];

  return (
    <Row gutter={24}>
      <Col span={18}>
        <Card
          title={STEPS[step]}
          extra={
            <Space>
              <Button onClick={() => setShowHistory(true)} data-testid="recent-history">Recent History</Button>
              <Button onClick={onDone}>Cancel</Button>
            </Space>
          }
        >
          {page[step]}
          {step < 4 && stepProblems(step).length > 0 && step !== 1 && (
            <Alert type="warning" showIcon message={stepProblems(step)[0].text} style={{ marginTop: 12 }} />
          )}
          <Divider />
          <Space>
            <Button disabled={step === 0} onClick={() => setStep(step - 1)} data-testid="previous">Previous</Button>
            {step < 4 && <Button type="primary" onClick={() => setStep(step + 1)} data-testid="next">Next</Button>}
            {step < 4 && <Button onClick={() => setStep(4)} data-testid="skip-to-review">Skip to review</Button>}
          </Space>
        </Card>
      </Col>
      <Col span={6}>
        <Steps direction="vertical" current={step} onChange={setStep} items={STEPS.map((t, i) => ({ title: t, status: stepProblems(i).length ? 'error' : i === step ? 'process' : i < step ? 'finish' : 'wait' }))} />
      </Col>
      {renaming && (
        <NameDialog
          title="Rename this launch"
          initial={renaming.label}
          okText="Rename"
          testId="history-label"
          check={(l) => (l.trim() === '' ? 'Give it a name.' : l.length > 64 ? 'Use at most 64 characters.' : null)}
          onSubmit={async (label) => {
            setHistory(history.map((x) => (x.id === renaming.id ? { ...x, label: label.trim() } : x)));
          }}
          onClose={() => setRenaming(null)}
        />
      )}
      <Modal open={showHistory} title="Recent History" footer={null} onCancel={() => setShowHistory(false)}>
        <List
          dataSource={history}
          locale={{ emptyText: 'No launches yet' }}
          renderItem={(h) => (
            <List.Item
              actions={[
                <Switch key="p" size="small" checked={h.pinned} checkedChildren="pinned" onChange={(p) => { setHistory(history.map((x) => (x.id === h.id ? { ...x, pinned: p } : x))); }} />,
                <Button key="r" size="small" data-testid={`history-rename-${h.label}`} onClick={() => setRenaming(h)}>Rename</Button>,
              ]}
            >
              <a onClick={() => { setS(completeSettings(h.settings)); setServiceError(null); setStep(4); setShowHistory(false); }}>{h.label}</a>
              <Typography.Text type="secondary"> {new Date(h.at).toLocaleString()}</Typography.Text>
            </List.Item>
          )}
        />
      </Modal>
    </Row>
  );
}
