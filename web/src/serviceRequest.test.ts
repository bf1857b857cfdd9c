import { describe, expect, it } from 'vitest';
import { DEFAULTS, LaunchSettings, problems } from './launch';
import { launchServiceBody, launchServiceProblem, newServiceBody, settingField } from './serviceRequest';

const inference: LaunchSettings = {
  ...DEFAULTS, type: 'inference', name: 'ui-launched', model: 'uimodel', environment: 'bai/python:3.11-bookworm', cpu: 2, memGiB: 1.5,
  shmemGiB: 0.125, replicas: 2, env: [{ key: 'GREETING', value: 'hi' }], ompThreads: 2,
};

describe('the model service the launcher asks for', () => {
  it("takes the launcher's image, resources, environment, group, project and replicas", () => {
    const b = launchServiceBody(inference, null);
    expect(b).toMatchObject({
      name: 'ui-launched', image: 'bai/python:3.11-bookworm', replicas: 2, open_to_public: false, group: 'default',
      cluster_mode: null, cluster_size: null, owner_access_key: null,
    });
    expect(b.config).toEqual({
      model: 'uimodel', scaling_group: 'default', resources: { cpu: 2, mem: '1536m' }, resource_opts: { shmem: '128m' },
      environ: { GREETING: 'hi', OMP_NUM_THREADS: '2' }, extra_mounts: null, model_definition_path: null,
      model_mount_destination: null, model_version: null, vfolder_subpath: null,
    });
  });

  it('a free image reference, an accelerator, a cluster, an owner and a public endpoint go along', () => {
    const b = launchServiceBody(
      { ...inference, image: 'bai/python:3.12', accelerator: 0.5, clusterSize: 2, clusterMode: 'multi-node', ownerAccessKey: 'AKIA', openToPublic: true, name: '' },
      'cuda.shares',
    );
    expect(b).toMatchObject({ name: null, image: 'bai/python:3.12', cluster_mode: 'multi-node', cluster_size: 2, owner_access_key: 'AKIA', open_to_public: true });
    expect(b.config.resources).toEqual({ cpu: 2, mem: '1536m', 'cuda.shares': '0.5' });
  });

  it("is the same request the Serving page's dialog makes", () => {
    const b = newServiceBody({ name: 'svc1', model: 'm', image: ' python ', scalingGroup: 'default', resources: { cpu: '1', mem: '1g' }, replicas: 1, public: false });
    expect(b).toMatchObject({ name: 'svc1', image: 'python', group: null, cluster_mode: null, replicas: 1 });
    expect(b.config).toMatchObject({ resources: { cpu: '1', mem: '1g' }, resource_opts: {}, environ: {} });
  });

  it("a server's refusal is shown beside its field, on that field's page", () => {
    expect(launchServiceProblem('a service named "ui-topics" exists (e1); pick another name or remove it')).toEqual({
      field: 'name', step: 0, msg: 'a service named "ui-topics" exists (e1); pick another name or remove it',
    });
    expect(launchServiceProblem('config.model: Selected VFolder is not a model folder')).toMatchObject({ field: 'model', step: 0 });
    expect(launchServiceProblem('replicas 20 is out of range')).toMatchObject({ field: 'replicas', step: 1 });
    expect(launchServiceProblem('cpu 99 is more than any agent has')).toMatchObject({ field: 'cpu', step: 1 });
    expect(launchServiceProblem('something else broke')).toMatchObject({ field: null, step: 4 });
    expect(settingField('memGiB')).toBe('mem');
    expect(settingField('environment')).toBe('image');
    expect(settingField('preopen')).toBeNull();
  });

  it('Inference needs a model folder and a service name by the service rules; ports are not asked', () => {
    const max = { cpu: 8, memGiB: 16 };
    expect(problems(inference, max, null)).toEqual([]);
    expect(problems({ ...inference, model: '' }, max, null)).toEqual([{ step: 0, text: 'Choose a model folder.' }]);
    // A dot is fine in a session name, not in a service name.
    expect(problems({ ...inference, name: 'my.service' }, max, null)).toEqual([{ step: 0, text: `"." is not allowed: use letters, digits, '_' or '-'.` }]);
    expect(problems({ ...inference, name: 'my.service', type: 'interactive' }, max, null)).toEqual([]);
    expect(problems({ ...inference, replicas: 17 }, max, null)).toEqual([{ step: 1, text: '17 is out of range: a service runs 0 to 16 replicas.' }]);
    expect(problems({ ...inference, preopen: '80' }, max, null)).toEqual([]);
  });
});
