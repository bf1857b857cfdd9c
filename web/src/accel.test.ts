import { describe, expect, it } from 'vitest';
import type { Schema } from './api';
import { formatSlotMap, formatSlots } from './api';
import { accelOffer, accelOffers, deviceKind, deviceSeries, displayUnit, formatAccel, formatAmount, formatDevice, formatGiB, isWhole, migProfile, toMilli } from './accel';

type Agent = Schema<'Agent'>;
type Device = Schema<'AgentDevice'>;
type Sample = Schema<'StatSample'>;

const slots = (cpu: string, mem: string, accel: Record<string, string> = {}): Schema<'ResourceSlots'> => ({ cpu, mem, ...accel });

function device(slot: string, id: string, quantum: string, over: Partial<Device> = {}): Device {
  return { slot, id, plugin: 'cuda', model: 'NVIDIA H100 80GB HBM3', memory: 80 * 2 ** 30, numa_node: 0, capacity: '1', quantum, ...over };
}

function agent(id: string, group: string, slot: string | null, free: string, devices: Device[], alive = true): Agent {
  const accel = (v: string): Record<string, string> => (slot ? { [slot]: v } : {});
  return {
    id,
    scaling_group: group,
    alive,
    status: alive ? 'ALIVE' : 'LOST',
    drained: false,
    remote: false,
    address: '',
    version: '0.1.0',
    last_heartbeat: '2026-11-23T00:00:00Z',
    capacity: slots('8', String(16 * 2 ** 30), accel(String(devices.length || 1))),
    used: slots('0', '0', accel('0')),
    free: slots('8', String(16 * 2 ** 30), accel(free)),
    devices,
    warm_pool: { pools: [], hits: 0, misses: 0, refills: 0, bind_failures: 0, evictions: 0 },
  };
}

function sample(at: number, devices?: Schema<'DeviceReading'>[]): Sample {
  const s: Sample = { at_ms: at, cpu_util: 1, mem: 1, mem_bytes: 1, net_rx_bps: 0, net_tx_bps: 0, io_read_bps: 0, io_write_bps: 0 };
  return devices ? { ...s, devices, cuda_util: 0, cuda_mem: 0 } : s;
}

describe('units', () => {
  it('name slots as users read them', () => {
    expect(displayUnit('cuda.device')).toBe('GPU');
    expect(displayUnit('cuda.shares')).toBe('fGPU');
    expect(displayUnit('mock.shares')).toBe('mock.shares');
    expect(isWhole('cuda.device')).toBe(true);
    expect(isWhole('cuda.shares')).toBe(false);
    expect(isWhole('cuda.device:1g.18gb-mig')).toBe(true);
    expect(migProfile('cuda.device:1g.18gb-mig')).toBe('1g.18gb');
    expect(migProfile('cuda.device')).toBeNull();
    expect(migProfile('cuda.device:-mig')).toBeNull();
    expect(displayUnit('cuda.device:1g.18gb-mig')).toBe('MIG 1g.18gb');
    expect(formatAccel('1', 'cuda.device:1g.18gb-mig')).toBe('1 MIG 1g.18gb');
  });
  it('write whole GPUs as integers and shares with two decimals', () => {
    expect(formatAccel('1', 'cuda.device')).toBe('1 GPU');
    expect(formatAccel(2, 'cuda.device')).toBe('2 GPU');
    expect(formatAccel('0.5', 'cuda.shares')).toBe('0.50 fGPU');
    expect(formatAccel(0.1 + 0.2, 'cuda.shares')).toBe('0.30 fGPU');
    expect(formatAccel('2', 'cuda.shares')).toBe('2.00 fGPU');
    expect(formatAmount('0.125', 'mock.shares')).toBe('0.125');
    expect(formatAccel('0.25', 'mock.shares')).toBe('0.25 mock.shares');
  });
  it('count in milli-units', () => {
    expect(toMilli('0.5')).toBe(500);
    expect(toMilli(0.1 + 0.2)).toBe(300);
    expect(toMilli('nope')).toBe(0);
  });
  it('write device memory in GiB and devices in a line', () => {
    expect(formatGiB(80 * 2 ** 30)).toBe('80 GiB');
    expect(formatGiB(81559 * 2 ** 20)).toBe('79.6 GiB');
    expect(formatDevice(device('cuda.shares', '0', '0.1'))).toBe('NVIDIA H100 80GB HBM3 · 80 GiB · 1.00 fGPU');
    expect(formatDevice(device('cuda.device', '1', '1'))).toBe('NVIDIA H100 80GB HBM3 · 80 GiB · 1 GPU');
  });
  it('write slot maps with accelerator units', () => {
    expect(formatSlotMap(slots('2', String(4 * 2 ** 30), { 'cuda.shares': '0.5' }))).toBe('2 CPU, 4 GiB, 0.50 fGPU');
    expect(formatSlots('{"cpu":"1","mem":"1073741824","cuda.device":"1"}')).toBe('1 CPU, 1 GiB, 1 GPU');
    expect(formatSlots('{"cpu":"1","mem":"1073741824","cuda.device":"0"}')).toBe('1 CPU, 1 GiB');
    expect(formatSlots('not json')).toBe('-');
  });
});

describe('what a resource group offers', () => {
  it('is nothing without accelerators', () => {
    expect(accelOffer([agent('a', 'default', null, '0', [])], 'default')).toBeNull();
    expect(accelOffer([agent('a', 'gpu', 'cuda.device', '1', [device('cuda.device', '0', '1')])], 'default')).toBeNull();
  });
  it('takes the unit and quantum from the devices, and the most one alive agent has free', () => {
    const agents = [
      agent('a', 'default', 'cuda.shares', '0.35', [device('cuda.shares', '0', '0.1')]),
      agent('b', 'default', 'cuda.shares', '1.2', [device('cuda.shares', '0', '0.1'), device('cuda.shares', '1', '0.1')]),
      agent('c', 'default', 'cuda.shares', '2', [device('cuda.shares', '0', '0.1'), device('cuda.shares', '1', '0.1')], false),
    ];
    expect(accelOffer(agents, 'default')).toEqual({ slot: 'cuda.shares', unit: 'fGPU', whole: false, quantumMilli: 100, step: 0.1, max: 1.2, precision: 2 });
    // One chosen agent: what it has free, down to a multiple of the step.
    expect(accelOffer(agents, 'default', 'a')?.max).toBe(0.3);
  });
  it('steps whole GPUs by one', () => {
    const o = accelOffer([agent('a', 'default', 'cuda.device', '2', [device('cuda.device', '0', '1'), device('cuda.device', '1', '1')])], 'default');
    expect(o).toMatchObject({ slot: 'cuda.device', unit: 'GPU', whole: true, quantumMilli: 1000, step: 1, max: 2, precision: 0 });
  });
  it('takes the coarsest quantum of the cluster, as the server checks it', () => {
    const agents = [
      agent('a', 'default', 'cuda.shares', '1', [device('cuda.shares', '0', '0.1')]),
      agent('b', 'other', 'cuda.shares', '1', [device('cuda.shares', '0', '0.25')]),
    ];
    expect(accelOffer(agents, 'default')).toMatchObject({ quantumMilli: 250, step: 0.25, max: 1 });
  });
  it('offers each kind of GPU a Kubernetes node has, MIG instances one at a time', () => {
    const mig = 'cuda.device:1g.18gb-mig';
    const node = agent('k', 'default', 'cuda.device', '1', []);
    node.capacity = { ...node.capacity, [mig]: '7' };
    node.free = { ...node.free, [mig]: '5' };
    const offers = accelOffers([node], 'default');
    expect(offers.map((o) => o.slot)).toEqual(['cuda.device', mig]);
    expect(offers[1]).toEqual({ slot: mig, unit: 'MIG 1g.18gb', whole: true, quantumMilli: 1000, step: 1, max: 1, precision: 0 });
    // The launch's choice, where offered; else the first.
    expect(accelOffer([node], 'default', null, mig)?.slot).toBe(mig);
    expect(accelOffer([node], 'default', null, 'cuda.shares')?.slot).toBe('cuda.device');
    expect(accelOffer([node], 'default', null, null)?.slot).toBe('cuda.device');
    // None free: nothing to ask for.
    node.free = { ...node.free, [mig]: '0' };
    expect(accelOffer([node], 'default', null, mig)?.max).toBe(0);
  });
  it('offers a dummy agent’s shares without devices in steps of 0.1, leaving the quantum to the server', () => {
    const o = accelOffer([agent('d', 'default', 'mock.shares', '4', [])], 'default');
    expect(o).toMatchObject({ slot: 'mock.shares', unit: 'mock.shares', whole: false, quantumMilli: null, step: 0.1, max: 4 });
  });
});

describe('device charts', () => {
  it('are none for a session without accelerators', () => {
    expect(deviceSeries([sample(1), sample(2)])).toEqual([]);
    expect(deviceKind('{"cpu":"1","mem":"1073741824"}')).toBe('Accelerator');
  });
  it('follow each device over the samples', () => {
    const r = (device: string, util: number, used: number) => ({ device, util, mem_used: used, mem_total: 40 * 2 ** 30 });
    const series = deviceSeries([sample(1, [r('0', 10, 1), r('1', 50, 5)]), sample(2), sample(3, [r('0', 20, 2), r('1', 60, 6)])]);
    expect(series).toEqual([
      { device: '0', util: [10, 20], memUsed: [1, 2], memTotal: 40 * 2 ** 30 },
      { device: '1', util: [50, 60], memUsed: [5, 6], memTotal: 40 * 2 ** 30 },
    ]);
    expect(deviceKind('{"cuda.shares":"0.5"}')).toBe('GPU');
    expect(deviceKind('')).toBe('Accelerator');
  });
});
