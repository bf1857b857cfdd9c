import { describe, expect, it } from 'vitest';
import type { AccelOffer } from './accel';
import { accelerator, batch, clusterSize, entryName, envName, folderName, preopenPorts, resources, sessionName } from './validate';

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
  });
});

describe('resources', () => {
  const max = { cpu: 4, memGiB: 8 };
  it('keeps shared memory within memory', () => {
    expect(resources({ cpu: 1, memGiB: 1, shmemGiB: 0.0625 }, max)).toBeNull();
    expect(resources({ cpu: 1, memGiB: 1, shmemGiB: 2 }, max)).toMatch(/more than the memory/);
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
