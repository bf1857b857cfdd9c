// The "Create service" dialog: name, model folder (its definition checked when chosen, see
// ModelFolderField.tsx), image, resources per replica, replicas, public endpoint. Each
// field's rule is checked as typed (validate.ts, as the server checks), and what the server
// refuses is shown beside the field it names. The request is serviceRequest.ts's, as the
// launcher's Inference type makes it.
import { useEffect, useState } from 'react';
import { Alert, AutoComplete, Col, Form, Input, Modal, Row, Select, Switch } from 'antd';
import type { ButtonProps } from 'antd';
import { api, ApiError, Schema } from './api';
import { dataProps } from './dataProps';
import { DEFAULT_IMAGE, imageOptions } from './images';
import { useImages } from './useImages';
import type { Service } from './serving';
import { newServiceBody } from './serviceRequest';
import ModelFolderField from './ModelFolderField';
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

/** The body of `POST /services` for the form. */
function serviceBody(d: Draft): Schema<'NewService'> {
  return newServiceBody({
    name: d.name,
    model: d.model,
    image: d.image,
    scalingGroup: d.group,
    resources: { cpu: d.cpu.trim(), mem: d.mem.trim() },
    replicas: Number(d.replicas.trim()),
    public: d.public,
  });
}

export default function ServiceCreate({ onClose, onCreated }: { onClose: () => void; onCreated: (s: Service) => void }) {
  const [d, setD] = useState<Draft>(DEFAULTS);
  const [groups, setGroups] = useState<string[]>(['default']);
  const [server, setServer] = useState<{ field: Field | null; msg: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const { images } = useImages();
  useEffect(() => {
    api('GET', '/resource-groups').then((r) => setGroups(r.resource_groups.map((g) => g.name)), () => undefined);
  }, []);
  const problems = draftProblems(d);
  const set = <K extends keyof Draft>(k: K, val: Draft[K]) => {
    setD((o) => ({ ...o, [k]: val }));
    if (server && (server.field === k || server.field === null)) setServer(null);
  };
  const shown = (f: Field) => problems[f] ?? (server?.field === f ? server.msg : null);
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
        <ModelFolderField value={d.model} onChange={(m) => set('model', m)} problem={shown('model')} />
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
