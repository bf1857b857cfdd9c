import { describe, expect, it } from 'vitest';
import { formatPool, poolCell, warmPoolSummary, WarmPool } from './warmPool';

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
  it('says when a burst of starts grew a pool past its target', () => {
    expect(formatPool({ shape: SHAPE, target: 1, kept: 3, ready: 2, making: 1 })).toBe(`${SHAPE} — 2 of 1 ready (1 being made, a burst: keeps 3)`);
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

  it("shows an alive agent's pools in two lines, each pool in full for the tooltip", () => {
    const one = { ...none, pools: [{ shape: SHAPE, target: 1, kept: 1, ready: 1, making: 0 }], hits: 2, misses: 1, refills: 3 };
    expect(poolCell('ALIVE', one)).toEqual({
      ready: '1 of 1 ready',
      counters: '2 hits, 1 miss',
      stale: null,
      lines: [`${SHAPE} — 1 of 1 ready`, 'Warm pools: 2 hits, 1 miss, 3 made, 0 failed to bind, 0 given up for room'],
    });
    const two = { ...none, pools: [{ shape: SHAPE, target: 2, kept: 2, ready: 1, making: 1 }, { shape: `${SHAPE}x`, target: 1, kept: 1, ready: 1, making: 0 }] };
    expect(poolCell('ALIVE', two).ready).toBe('2 of 3 ready in 2 pools, 1 being made');
    expect(poolCell('ALIVE', none)).toEqual({ ready: null, counters: null, stale: null, lines: [] });
  });
  it("never shows a lost or gone agent's pools as ready", () => {
    const one = { ...none, pools: [{ shape: SHAPE, target: 1, kept: 1, ready: 1, making: 0 }] };
    for (const [status, why] of [['LOST', 'agent lost'], ['GONE', 'agent gone'], ['DISCONNECTED', 'link down']]) {
      const c = poolCell(status, one);
      expect(c.ready).toBeNull();
      expect(c.stale).toBe(`not known (${why})`);
      expect(c.lines[0]).toBe(`Not known while the agent is ${status.toLowerCase()}; last reported:`);
    }
    expect(poolCell('LOST', none).stale).toBeNull();
  });
});
