import { describe, expect, it } from 'vitest';
import { deviceSummary, heartbeat, resourceLines } from './agentRow';

const G = 2 ** 30;
const gpu = (id: string, model = 'Mock GPU', plugin = 'mock') => ({ id, model, plugin, slot: 'cuda.shares', capacity: '1', quantum: '0.1', memory: 8 * G });

describe("an agent row's cells", () => {
  it('says what is free of the capacity, with all three in full', () => {
    const r = resourceLines({ capacity: { cpu: '4', mem: String(8 * G) }, used: { cpu: '1', mem: String(2 * G) }, free: { cpu: '3', mem: String(6 * G) } } as never);
    expect(r).toEqual({ free: '3 CPU, 6 GiB free', of: 'of 4 CPU, 8 GiB', full: 'capacity 4 CPU, 8 GiB; used 1 CPU, 2 GiB; free 3 CPU, 6 GiB' });
  });
  it('sums devices up in a few words, each in full for the tooltip', () => {
    expect(deviceSummary([])).toEqual({ text: 'none', detail: '', lines: [] });
    expect(deviceSummary([gpu('0'), gpu('1')])).toEqual({
      text: '2 × Mock GPU',
      detail: 'mock · 8 GiB each',
      lines: ['fGPU 0: Mock GPU · 8 GiB · 1.00 fGPU (mock)', 'fGPU 1: Mock GPU · 8 GiB · 1.00 fGPU (mock)'],
    });
    expect(deviceSummary([gpu('0', 'NVIDIA H100', 'cuda')])).toMatchObject({ text: '1 × NVIDIA H100', detail: 'cuda · 8 GiB' });
    expect(deviceSummary([gpu('0', 'NVIDIA A100', 'cuda'), { ...gpu('1', 'NVIDIA H100', 'cuda'), memory: 80 * G }])).toMatchObject({ text: '2 devices', detail: 'cuda' });
  });
  it('writes the heartbeat time short: the time on its day, the date on a later one', () => {
    const now = new Date('2026-11-29T09:00:00Z');
    expect(heartbeat('2026-11-29T08:12:01.123456Z', now)).toEqual({ short: '08:12:01 UTC', full: '2026-11-29 08:12:01 UTC' });
    expect(heartbeat('2026-11-28T08:12:01Z', now)).toEqual({ short: '2026-11-28 08:12 UTC', full: '2026-11-28 08:12:01 UTC' });
    expect(heartbeat('', now)).toEqual({ short: '-', full: '-' });
  });
});
