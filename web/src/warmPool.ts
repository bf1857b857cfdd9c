// An agent's warm pools (kernels it keeps started per shape), in words for the Agents page.
import { Schema } from './api';

export type WarmPool = Schema<'AgentWarmPool'>;
export type Pool = Schema<'AgentPool'>;

/** `IMAGE,cpu=1,mem=1024m,shm=64m — 1 of 2 ready (1 being made)`; an idle pool, shrunk:
 * `… — 1 of 4 ready (idle: keeps 1)`. */
export function formatPool(p: Pool): string {
  const notes = [];
  if (p.making) notes.push(`${p.making} being made`);
  if (p.kept < p.target) notes.push(`idle: keeps ${p.kept}`);
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
