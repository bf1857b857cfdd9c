// The "Create service" dialog: name, model folder (its definition checked when chosen),
// image, resources per replica, replicas, public endpoint. Each field's rule is checked as
// typed (validate.ts, as the server checks), and what the server refuses is shown beside
// the field it names.
import { useEffect, useState } from 'react';
import { Alert, AutoComplete, Col, Form, Input, Modal, Row, Select, Switch } from 'antd';
import type { ButtonProps } from 'antd';
import { api, ApiError, Schema } from './api';
import { dataProps } from './dataProps';
import { DEFAULT_IMAGE, imageOptions } from './images';
import { useImages } from './useImages';
import { checkDefinition, definitionProblem, describeDefinition, Service } from './serving';
import * as v from './validate';

type Field = 'name' | 'model' | 'image' | 'replicas' | 'cpu' | 'mem';

interface Draft {
  name: string;
  model: string;
  image: string;
  group: string;
  cpu: string;
  mem: string;
  replicas: string;
  public: boolean;
}

const DEFAULTS: Draft = { name: '', model: '', image: DEFAULT_IMAGE, group: 'default', cpu: '1', mem: '1g', replicas: '1', public: false };

/** The problems of the form, by field, before anything is sent. */
export function draftProblems(d: Draft): Partial<Record<Field, string>> {
  const all: Partial<Record<Field, v.Problem>> = {
    name: v.serviceName(d.name),
    model: d.model ? null : 'Choose a model folder.',
    image: d.image.trim() ? null : 'Choose an environment or give an image name.',
    cpu: v.cpuCores(d.cpu),
    mem: v.memSize(d.mem),
    replicas: v.replicas(d.replicas),
  };
  return Object.fromEntries(Object.entries(all).filter(([, p]) => p)) as Partial<Record<Field, string>>;
}

/** The body of `POST /services` (every optional field `null`, as the official client sends). */
function serviceBody(d: Draft): Schema<'NewService'> {
  const config: Schema<'ServiceConfig'> = {
    model: d.model,
    scaling_group: d.group,
    resources: { cpu: d.cpu.trim(), mem: d.mem.trim() },
    resource_opts: {},
    environ: {},
    extra_mounts: null,
    model_definition_path: null,
    model_mount_destination: null,
    model_version: null,
    vfolder_subpath: null,
  };
  return {
    name: d.name || null,
    replicas: Number(d.replicas.trim()),
    image: d.image.trim(),
    open_to_public: d.public,
    config,
    arch: null, bootstrap_script: null, callback_url: null, cluster_mode: null, cluster_size: null, domain: null, group: null,
    owner_access_key: null, runtime_variant: null, startup_command: null, tag: null,
  };
}

export default function ServiceCreate({ onClose, onCreated }: { onClose: () => void; onCreated: (s: Service) => void }) {
  const [d, setD] = useState<Draft>(DEFAULTS);
  const [folders, setFolders] = useState<Schema<'Folder'>[] | null>(null);
  const [groups, setGroups] = useState<string[]>(['default']);
  const [definition, setDefinition] = useState<{ model: string; ok?: string; problem?: string } | null>(null);
  const [server, setServer] = useState<{ field: Field | null; msg: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const { images } = useImages();
  useEffect(() => {
    api('GET', '/folders').then((f) => setFolders(f.filter((x) => x.usage_mode === 'model')), () => setFolders([]));
    api('GET', '/resource-groups').then((r) => setGroups(r.resource_groups.map((g) => g.name)), () => undefined);
  }, []);
  // The chosen folder's definition, checked as the server will check it at create.
  useEffect(() => {
    if (!d.model) return setDefinition(null);
    let live = true;
    setDefinition({ model: d.model });
    checkDefinition(d.model).then(
      (c) => live && setDefinition({ model: d.model, ok: describeDefinition(c) }),
      (e) => {
        const p = definitionProblem(e);
        if (live) setDefinition(p ? { model: d.model, problem: p } : null);
      },
    );
    return () => {
      live = false;
    };
  }, [d.model]);

  const problems = draftProblems(d);
  const set = <K extends keyof Draft>(k: K, val: Draft[K]) => {
    setD((o) => ({ ...o, [k]: val }));
    if (server && (server.field === k || server.field === null)) setServer(null);
  };
  const shown = (f: Field) => problems[f] ?? (server?.field === f ? server.msg : null) ?? (f === 'model' ? definition?.problem ?? null : null);
  const item = (f: Field) => ({ validateStatus: shown(f) ? ('error' as const) : undefined, help: shown(f) ? <span data-testid={`svc-${f}-error`}>{shown(f)}</span> : undefined });

  const submit = async () => {
    if (Object.keys(problems).length) return;
    setBusy(true);
    setServer(null);
    try {
      const s = await api('POST', '/services', { body: serviceBody(d) });
      onCreated(s);
    } catch (e) {
      const msg = e instanceof ApiError ? e.message : String(e);
      setServer({ field: v.serviceProblemField(msg), msg });
    } finally {
      setBusy(false);
    }
  };

  const modelHelp = shown('model') ? item('model').help : definition?.ok ? <span style={{ color: '#389e0d' }} data-testid="svc-definition-ok">{definition.ok}</span> : definition ? 'Checking the model definition…' : undefined;
  return (
    <Modal
      open
      width={640}
      title="Create a model service"
      okText="Create"
      onOk={submit}
      onCancel={onClose}
      confirmLoading={busy}
      okButtonProps={dataProps<ButtonProps>({ disabled: Object.keys(problems).length > 0, 'data-testid': 'svc-create-ok' })}
    >
      <Form layout="vertical">
        <Form.Item label="Service name (optional)" {...item('name')}>
          <Input data-testid="svc-name" value={d.name} placeholder="4–64 letters, digits, '_' and '-'" onChange={(e) => set('name', e.target.value)} />
        </Form.Item>
        <Form.Item label="Model folder" validateStatus={item('model').validateStatus} help={modelHelp}>
          <Select
            data-testid="svc-model"
            value={d.model || undefined}
            placeholder={folders && !folders.length ? 'No model folders: create one on the Data page (usage mode model)' : 'Choose a model folder'}
            loading={folders === null}
            onChange={(m: string) => set('model', m)}
            options={(folders ?? []).map((f) => ({ value: f.name, label: f.group ? `${f.name} (project ${f.group})` : f.name }))}
          />
        </Form.Item>
        <Row gutter={16}>
          <Col span={12}>
            <Form.Item label="Environment or image" {...item('image')}>
              <AutoComplete data-testid="svc-image" value={d.image} options={imageOptions(images ?? [])} onChange={(i: string) => set('image', i)} placeholder="python" />
            </Form.Item>
          </Col>
          <Col span={12}>
            <Form.Item label="Resource group">
              <Select value={d.group} onChange={(g: string) => set('group', g)} options={groups.map((g) => ({ value: g, label: g }))} />
            </Form.Item>
          </Col>
        </Row>
        <Row gutter={16}>
          <Col span={8}>
            <Form.Item label="CPU per replica (cores)" {...item('cpu')}>
              <Input data-testid="svc-cpu" value={d.cpu} onChange={(e) => set('cpu', e.target.value)} />
            </Form.Item>
          </Col>
          <Col span={8}>
            <Form.Item label="Memory per replica" {...item('mem')}>
              <Input data-testid="svc-mem" value={d.mem} placeholder="256m, 1g" onChange={(e) => set('mem', e.target.value)} />
            </Form.Item>
          </Col>
          <Col span={8}>
            <Form.Item label={`Replicas (0–${v.MAX_REPLICAS})`} {...item('replicas')}>
              <Input data-testid="svc-replicas" value={d.replicas} onChange={(e) => set('replicas', e.target.value)} />
            </Form.Item>
          </Col>
        </Row>
        <Form.Item label="Open to public" help={d.public ? 'Anyone who knows the URL can call it.' : 'Callers need a token (Generate token in the service panel).'}>
          <Switch data-testid="svc-public" checked={d.public} onChange={(p) => set('public', p)} />
        </Form.Item>
      </Form>
      {server && server.field === null && <Alert type="error" showIcon message={server.msg} data-testid="svc-error" />}
    </Modal>
  );
}
