import { describe, expect, it } from 'vitest';
import { formatPool, warmPoolSummary, WarmPool } from './warmPool';

const SHAPE = 'bai/python:3.11-bookworm,cpu=1,mem=1024m,shm=64m';
const none: WarmPool = { pools: [], hits: 0, misses: 0, refills: 0, bind_failures: 0, evictions: 0 };

describe('warm pools', () => {
  it('says how many of a pool are ready and being made', () => {
    expect(formatPool({ shape: SHAPE, target: 2, kept: 2, ready: 1, making: 1 })).toBe(`${SHAPE} — 1 of 2 ready (1 being made)`);
    expect(formatPool({ shape: SHAPE, target: 2, kept: 2, ready: 2, making: 0 })).toBe(`${SHAPE} — 2 of 2 ready`);
  });
  it('says when an idle pool shrank', () => {
    expect(formatPool({ shape: SHAPE, target: 4, kept: 1, ready: 1, making: 0 })).toBe(`${SHAPE} — 1 of 4 ready (idle: keeps 1)`);
    expect(formatPool({ shape: SHAPE, target: 4, kept: 1, ready: 0, making: 1 })).toBe(`${SHAPE} — 0 of 4 ready (1 being made, idle: keeps 1)`);
  });
  it('sums up the counters when the agent has pools or hits or misses', () => {
    const w = { pools: [{ shape: SHAPE, target: 2, kept: 2, ready: 1, making: 1 }], hits: 3, misses: 1, refills: 4, bind_failures: 0, evictions: 0 };
    expect(warmPoolSummary(w)).toBe('Warm pools: 3 hits, 1 miss, 4 made, 0 failed to bind, 0 given up for room');
    expect(warmPoolSummary({ ...none, hits: 1, misses: 2 })).toBe('Warm pools: 1 hit, 2 misses, 0 made, 0 failed to bind, 0 given up for room');
  });
  it('says nothing for an agent with no pools and no hits or misses', () => {
    expect(warmPoolSummary(none)).toBeNull();
    expect(warmPoolSummary(undefined)).toBeNull();
  });
});
