import { describe, expect, it } from 'vitest';
import { batch, entryName, envName, folderName, preopenPorts, resources, sessionName } from './validate';

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
    expect(resources({ cpu: 1, memGiB: 1, shmemGiB: 0.0625, accelerator: 0 }, max)).toBeNull();
    expect(resources({ cpu: 1, memGiB: 1, shmemGiB: 2, accelerator: 0 }, max)).toMatch(/more than the memory/);
  });
  it('bounds CPU and memory', () => {
    expect(resources({ cpu: 0, memGiB: 1, shmemGiB: 0, accelerator: 0 }, max)).toMatch(/CPU/);
    expect(resources({ cpu: 5, memGiB: 1, shmemGiB: 0, accelerator: 0 }, max)).toMatch(/At most 4/);
    expect(resources({ cpu: 1, memGiB: 9, shmemGiB: 0, accelerator: 0 }, max)).toMatch(/At most 8 GiB/);
  });
  it('bounds accelerator shares by what the group offers', () => {
    expect(resources({ cpu: 1, memGiB: 1, shmemGiB: 0, accelerator: 0.5 }, max)).toMatch(/no AI accelerators/);
    const gpu = { ...max, accelerator: 2 };
    expect(resources({ cpu: 1, memGiB: 1, shmemGiB: 0, accelerator: 0.5 }, gpu)).toBeNull();
    expect(resources({ cpu: 1, memGiB: 1, shmemGiB: 0, accelerator: 2.5 }, gpu)).toMatch(/At most 2 accelerator/);
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
