// An agent's warm pools (kernels it keeps started per shape), in words for the Agents page.
import { Schema } from './api';

export type WarmPool = Schema<'AgentWarmPool'>;
export type Pool = Schema<'AgentPool'>;

/** `IMAGE,cpu=1,mem=1024m,shm=64m — 1 of 2 ready (1 being made)`; an idle pool, shrunk:
 * `… — 1 of 4 ready (idle: keeps 1)`; a pool grown by creates that found it empty:
 * `… — 3 of 1 ready (a burst: keeps 3)`. */
export function formatPool(p: Pool): string {
  const notes = [];
  if (p.making) notes.push(`${p.making} being made`);
  if (p.kept < p.target) notes.push(`idle: keeps ${p.kept}`);
  if (p.kept > p.target) notes.push(`a burst: keeps ${p.kept}`);
  const more = notes.length ? ` (${notes.join(', ')})` : '';
  return `${p.shape} — ${p.ready} of ${p.target} ready${more}`;
}

/** `Warm pools: 3 hits, 1 miss, 4 made, 0 failed to bind, 0 given up for room`, or null when the
 * agent keeps no pools and no create has hit or missed one. */
export function warmPoolSummary(w: WarmPool | null | undefined): string | null {
  if (!w || (!w.pools.length && !w.hits && !w.misses)) return null;
  const n = (k: number, one: string, many: string) => `${k} ${k === 1 ? one : many}`;
  return `Warm pools: ${n(w.hits, 'hit', 'hits')}, ${n(w.misses, 'miss', 'misses')}, ${w.refills} made, ${w.bind_failures} failed to bind, ${w.evictions} given up for room`;
}

/** What the Agents page shows of an agent's pools in its row: `ready` (line one: `1 of 1
 * ready`, `3 of 4 ready in 2 pools`) and `counters` (line two), or, for an agent that is not
 * ALIVE, `stale` (its pools are not known: a lost agent's kernels may be gone with it) and
 * no ready count. `lines` are the pools in full (the row's tooltip). */
export interface PoolCell {
  ready: string | null;
  counters: string | null;
  stale: string | null;
  lines: string[];
}

export function poolCell(status: string, w: WarmPool | null | undefined): PoolCell {
  const summary = warmPoolSummary(w);
  if (status !== 'ALIVE') {
    if (!summary || !w) return { ready: null, counters: null, stale: null, lines: [] };
    const why = status === 'DISCONNECTED' ? 'link down' : `agent ${status.toLowerCase()}`;
    return { ready: null, counters: null, stale: `not known (${why})`, lines: [`Not known while the agent is ${status.toLowerCase()}; last reported:`, ...w.pools.map(formatPool)] };
  }
  if (!summary || !w) return { ready: null, counters: null, stale: null, lines: [] };
  const ready = w.pools.reduce((n, p) => n + p.ready, 0);
  const target = w.pools.reduce((n, p) => n + p.target, 0);
  const making = w.pools.reduce((n, p) => n + p.making, 0);
  const pools = w.pools.length;
  const readyText = pools === 0 ? 'no pools' : `${ready} of ${target} ready${pools > 1 ? ` in ${pools} pools` : ''}${making ? `, ${making} being made` : ''}`;
  const n = (k: number, one: string, many: string) => `${k} ${k === 1 ? one : many}`;
  return {
    ready: readyText,
    counters: `${n(w.hits, 'hit', 'hits')}, ${n(w.misses, 'miss', 'misses')}`,
    stale: null,
    lines: [...w.pools.map(formatPool), summary],
  };
}
