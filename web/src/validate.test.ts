import { describe, expect, it } from 'vitest';
import type { AccelOffer } from './accel';
import {
  accelerator, batch, parseEmails, clusterSize, commitRefusal, cpuCores, duration, entryName, envName, folderName, imageMinimum, imageName, memSize, parseSize, preopenPorts, replicas, resources, rule,
  ruleProblemField, serviceName, serviceProblemField, sessionName,
} from './validate';
import type { RuleDraft } from './validate';

describe('session names', () => {
  it('accepts what the server accepts', () => {
    for (const n of ['', 'mysess', 'my-sess_1.x', '_abc', 'a'.repeat(64)]) expect(sessionName(n)).toBeNull();
  });
  it('refuses what the server refuses, saying why', () => {
    expect(sessionName('abc')).toMatch(/at least 4/);
    expect(sessionName('a'.repeat(65))).toMatch(/at most 64/);
    expect(sessionName('my sess')).toMatch(/" " is not allowed/);
    expect(sessionName('-abcd')).toMatch(/Start and end/);
    expect(sessionName('abcd.')).toMatch(/Start and end/);
  });
});

describe('environment variables', () => {
  it('checks names', () => {
    expect(envName('PATH')).toBeNull();
    expect(envName('_X1')).toBeNull();
    expect(envName('1X')).toMatch(/not starting with a digit/);
    expect(envName('A-B')).toMatch(/letters, digits/);
    expect(envName('')).toMatch(/name/);
    expect(envName('BAI_SESSION_ID')).toMatch(/reserved/);
  });
});

describe('preopen ports', () => {
  it('splits on commas and spaces', () => {
    expect(preopenPorts('8080, 8081 9000')).toEqual({ ports: [8080, 8081, 9000], problem: null });
    expect(preopenPorts('')).toEqual({ ports: [], problem: null });
  });
  it('refuses bad ports', () => {
    expect(preopenPorts('80').problem).toMatch(/1024 to 65535/);
    expect(preopenPorts('70000').problem).toMatch(/1024 to 65535/);
    expect(preopenPorts('8080,8080').problem).toMatch(/twice/);
    expect(preopenPorts('abc').problem).toMatch(/not a port/);
    expect(preopenPorts('2200').problem).toMatch(/built-in/);
    expect(preopenPorts('2001').problem).toMatch(/the session's runner/);
  });
});

describe('resources', () => {
  const max = { cpu: 4, memGiB: 8 };
  it('keeps shared memory within memory', () => {
    expect(resources({ cpu: 1, memGiB: 1, shmemGiB: 0.0625 }, max)).toBeNull();
    expect(resources({ cpu: 1, memGiB: 1, shmemGiB: 2 }, max)).toMatch(/larger than the shared memory/);
    expect(resources({ cpu: 1, memGiB: 1, shmemGiB: 1 }, max)).toMatch(/larger than the shared memory/);
  });
  it('bounds CPU and memory', () => {
    expect(resources({ cpu: 0, memGiB: 1, shmemGiB: 0 }, max)).toMatch(/CPU/);
    expect(resources({ cpu: 5, memGiB: 1, shmemGiB: 0 }, max)).toMatch(/At most 4/);
    expect(resources({ cpu: 1, memGiB: 9, shmemGiB: 0 }, max)).toMatch(/At most 8 GiB/);
  });
});

describe('AI accelerators', () => {
  const fgpu: AccelOffer = { slot: 'cuda.shares', unit: 'fGPU', whole: false, quantumMilli: 100, step: 0.1, max: 1.5, precision: 2 };
  const gpu: AccelOffer = { slot: 'cuda.device', unit: 'GPU', whole: true, quantumMilli: 1000, step: 1, max: 2, precision: 0 };
  const mock: AccelOffer = { slot: 'mock.shares', unit: 'mock.shares', whole: false, quantumMilli: null, step: 0.1, max: 4, precision: 2 };
  it('needs none, and refuses any where the group has none', () => {
    expect(accelerator(0, null)).toBeNull();
    expect(accelerator(0.5, null)).toMatch(/no AI accelerators/);
    expect(accelerator(-1, fgpu)).toMatch(/negative/);
    expect(accelerator(NaN, fgpu)).toMatch(/number/);
  });
  it('takes whole GPUs only for whole-device slots', () => {
    expect(accelerator(1, gpu)).toBeNull();
    expect(accelerator(2, gpu)).toBeNull();
    expect(accelerator(0.5, gpu)).toMatch(/not shared: ask for whole GPUs/);
    expect(accelerator(3, gpu)).toBe('At most 2 GPU is free on one agent of this resource group.');
  });
  it('takes multiples of the quantum for fGPU', () => {
    expect(accelerator(0.5, fgpu)).toBeNull();
    expect(accelerator(0.1 + 0.2, fgpu)).toBeNull(); // 0.30000000000000004
    expect(accelerator(1.5, fgpu)).toBeNull();
    expect(accelerator(0.25, fgpu)).toBe('Use a multiple of 0.10 fGPU.');
    expect(accelerator(0.0001, fgpu)).toMatch(/at most 3 decimals/);
    expect(accelerator(1.6, fgpu)).toBe('At most 1.50 fGPU is free on one agent of this resource group.');
    expect(accelerator(0.5, { ...fgpu, max: 0 })).toBe('No fGPU is free in this resource group now.');
  });
  it('takes one MIG instance', () => {
    const mig: AccelOffer = { slot: 'cuda.device:1g.18gb-mig', unit: 'MIG 1g.18gb', whole: true, quantumMilli: 1000, step: 1, max: 1, precision: 0 };
    expect(accelerator(1, mig)).toBeNull();
    expect(accelerator(0, mig)).toBeNull();
    expect(accelerator(2, mig)).toBe('A kernel takes one MIG 1g.18gb instance: ask for 1 (CUDA sees one MIG instance in a process).');
    expect(accelerator(0.5, mig)).toMatch(/one MIG 1g.18gb instance: ask for 1/);
    expect(accelerator(1, { ...mig, max: 0 })).toBe('No MIG 1g.18gb is free in this resource group now.');
  });
  it('leaves the step to the server where the cluster sets no quantum', () => {
    expect(accelerator(0.25, mock)).toBeNull();
    expect(accelerator(0.125, mock)).toBeNull();
  });
});

describe('batch sessions', () => {
  it('need a command and a positive timeout', () => {
    expect(batch('python train.py', null)).toBeNull();
    expect(batch('  ', null)).toMatch(/startup command/);
    expect(batch('x', 0)).toMatch(/positive/);
  });
});


describe('folder and entry names', () => {
  it('accept plain names and refuse the rest with a reason', () => {
    expect(folderName('mydata')).toBeNull();
    expect(folderName('.ssh')).toBeNull();
    expect(folderName('')).toMatch('name');
    expect(folderName('a b')).toMatch('" " is not allowed');
    expect(folderName('x'.repeat(65))).toMatch('64');
    expect(folderName('..')).toMatch('not a folder name');
    expect(entryName('results')).toBeNull();
    expect(entryName('../etc')).toMatch("without '/'");
    expect(entryName('é'.repeat(200))).toMatch('255');
  });
});

describe('cluster size', () => {
  it('accepts 1 to 64 whole containers', () => {
    expect(clusterSize(1)).toBeNull();
    expect(clusterSize(64)).toBeNull();
    expect(clusterSize(0)).toMatch('at least 1');
    expect(clusterSize(2.5)).toMatch('whole number');
    expect(clusterSize(65)).toMatch('64');
  });
});

describe('model services', () => {
  it('names: 4–64 letters, digits, _ and -, not at the ends', () => {
    for (const n of ['', 'topics', 'my_svc-1', '_abc', 'a'.repeat(64)]) expect(serviceName(n)).toBeNull();
    expect(serviceName('abc')).toMatch('at least 4');
    expect(serviceName('a'.repeat(65))).toMatch('at most 64');
    expect(serviceName('my.svc')).toMatch('"." is not allowed');
    expect(serviceName('-abc')).toMatch("'-'");
    expect(serviceName('abc-')).toMatch("'-'");
  });
  it('replicas: a whole number from 0 to 16', () => {
    for (const n of ['0', '1', ' 16 ']) expect(replicas(n)).toBeNull();
    expect(replicas('99')).toBe('99 is out of range: a service runs 0 to 16 replicas.');
    expect(replicas('-1')).toMatch('out of range');
    expect(replicas('1.5')).toMatch('not a whole number');
    expect(replicas('')).toMatch('Give');
  });
  it('resources per replica: cores and a size the server reads', () => {
    for (const c of ['1', '0.5', '.5', '2']) expect(cpuCores(c)).toBeNull();
    for (const c of ['0', '-1', 'abc', '']) expect(cpuCores(c)).toMatch('positive');
    expect(parseSize('256m')).toBe(256 * 2 ** 20);
    expect(parseSize('1.5g')).toBe(1.5 * 2 ** 30);
    expect(parseSize('2 GiB')).toBe(2 * 2 ** 30);
    expect(parseSize('1048576')).toBe(2 ** 20);
    expect(parseSize('1x')).toBeNull();
    expect(memSize('256m')).toBeNull();
    expect(memSize('32m')).toMatch('64 MiB');
    expect(memSize('lots')).toMatch('256m');
  });
  it('token lifetimes: seconds or 30m, 12h, 3d', () => {
    for (const d of ['3600', '30m', '12h', '1d', '1w', '1h30m', '1.5h']) expect(duration(d)).toBeNull();
    expect(duration('')).toMatch('Give');
    expect(duration('soon')).toMatch('not a duration');
    expect(duration('3x')).toMatch('not a duration');
    expect(duration('0')).toMatch('longer than 0');
  });
  it("server problems land beside the field their message names", () => {
    expect(serviceProblemField('config.model: Selected VFolder is not a model folder ("x" has usage mode general)')).toBe('model');
    expect(serviceProblemField('model-definition.yaml in model folder "m": models[0].service: missing field `port`')).toBe('model');
    expect(serviceProblemField('config.model_definition_path: model folder "m" has no model-definition.yaml')).toBe('model');
    expect(serviceProblemField('replicas 99 is out of range: a service runs 0 to 16 replicas')).toBe('replicas');
    expect(serviceProblemField('name "x" is not a service name: use 4 to 64 …')).toBe('name');
    expect(serviceProblemField('a service named "topics" exists (…); pick another name or remove it')).toBe('name');
    expect(serviceProblemField('mem="1" is too small: at least 64 MiB is needed')).toBe('mem');
    expect(serviceProblemField('cpu="x" is not a valid amount: give a positive number of cores')).toBe('cpu');
    expect(serviceProblemField('image is required: the image replicas run')).toBe('image');
    expect(serviceProblemField('the resource group has no agents')).toBeNull();
  });
});

describe('auto-scaling rules', () => {
  const base: RuleDraft = {
    mode: 'threshold', metric_source: 'INFERENCE_FRAMEWORK', metric_name: 'inflight', threshold: '5', comparator: 'GREATER_THAN',
    step_size: '1', target: '', min_replicas: '', max_replicas: '', cooldown_seconds: '300', scale_up_delay_seconds: '0',
    scale_down_delay_seconds: '0', priority: '0',
  };
  it('accept a threshold rule and a target rule', () => {
    expect(rule(base)).toEqual({});
    expect(rule({ ...base, step_size: '-1', min_replicas: '1' })).toEqual({});
    expect(rule({ ...base, mode: 'target', target: '4', min_replicas: '1', max_replicas: '4', threshold: '', comparator: null })).toEqual({});
  });
  it('name each field that is wrong, as the server would', () => {
    expect(rule({ ...base, metric_name: 'cpu_util' }).metric_name).toMatch('inflight, requests_per_second, latency_ms');
    expect(rule({ ...base, metric_source: 'KERNEL' }).metric_name).toMatch('cpu_util, mem');
    expect(rule({ ...base, threshold: 'x' }).threshold).toMatch('number');
    expect(rule({ ...base, comparator: null }).comparator).toMatch('comparison');
    expect(rule({ ...base, step_size: '0' }).step_size).toMatch('other than 0');
    expect(rule({ ...base, step_size: '1.5' }).step_size).toMatch('whole');
    expect(rule({ ...base, mode: 'target', target: '0', min_replicas: '1', max_replicas: '2' }).target).toMatch('above 0');
    expect(rule({ ...base, mode: 'target', target: '4' })).toMatchObject({ min_replicas: expect.any(String), max_replicas: expect.any(String) });
    expect(rule({ ...base, min_replicas: '3', max_replicas: '2' }).min_replicas).toMatch('more than the maximum');
    expect(rule({ ...base, max_replicas: '17' }).max_replicas).toMatch('16');
    expect(rule({ ...base, cooldown_seconds: '-1' }).cooldown_seconds).toMatch('whole');
    expect(rule({ ...base, scale_up_delay_seconds: '-1' }).scale_up_delay_seconds).toMatch('0 or more');
  });
  it("place the server's problems by the field their message starts with", () => {
    expect(ruleProblemField('threshold "x" is not a number')).toBe('threshold');
    expect(ruleProblemField('min_replicas 3 is more than max_replicas 2')).toBe('min_replicas');
    expect(ruleProblemField('step_size is required and must not be 0')).toBe('step_size');
    expect(ruleProblemField('"foo" is not a field of an auto-scaling rule')).toBeNull();
  });
});

describe('images', () => {
  it('image names: 4–32 letters, digits, - and _ (the server says the same)', () => {
    expect(imageName('webimg1')).toBeNull();
    expect(imageName('my-image_2')).toBeNull();
    expect(imageName('')).toBe('Give the image a name.');
    expect(imageName('abc')).toBe('Use at least 4 characters.');
    expect(imageName('a'.repeat(32))).toBeNull();
    expect(imageName('a'.repeat(33))).toBe('Use at most 32 characters.');
    expect(imageName('my.image')).toContain('"." is not allowed');
    expect(imageName('my image')).toContain('" " is not allowed');
  });

  it('only RUNNING interactive sessions can be converted', () => {
    expect(commitRefusal({ status: 'RUNNING', type: 'interactive' })).toBeNull();
    expect(commitRefusal({ status: 'RUNNING', type: 'batch' })).toContain('Only interactive sessions');
    expect(commitRefusal({ status: 'PENDING', type: 'interactive' })).toContain('this one is PENDING');
  });

  it("resources below an image's minimum are named by field", () => {
    const min = { cpu: 1, memGiB: 0.0625 };
    expect(imageMinimum({ cpu: 1, memGiB: 1 }, min)).toEqual({});
    expect(imageMinimum({ cpu: 0.5, memGiB: 0.05 }, min)).toEqual({ cpu: 'This image needs at least 1 CPU core.', memGiB: 'This image needs at least 64 MiB of memory.' });
    expect(imageMinimum({ cpu: 1, memGiB: 1 }, { cpu: 2, memGiB: 1.5 })).toEqual({ cpu: 'This image needs at least 2 CPU cores.', memGiB: 'This image needs at least 1.5 GiB of memory.' });
    expect(imageMinimum({ cpu: 0.5, memGiB: 0.25 }, { cpu: 0, memGiB: 0 })).toEqual({});
  });

  it('share emails are split on commas and spaces, and each must be an address', () => {
    expect(parseEmails(' a@x.org, b@y.org\nc@z.org ')).toEqual({ emails: ['a@x.org', 'b@y.org', 'c@z.org'], problem: null });
    expect(parseEmails('  ').problem).toBe('Enter at least one email.');
    expect(parseEmails('a@x.org bob').problem).toBe('bob is not an email address.');
  });
});
