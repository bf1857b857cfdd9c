// A session's row in the Sessions list, kept to two lines a cell (at 1280 × 800 too).
import { FINISHED_STATES, SessionItem } from './api';
import { formatAccel, isAccelSlot } from './accel';

/** A slot map in few characters: `0.5 CPU, 256 MiB, 2.00 fGPU` (memory in MiB below a GiB, else
 * in GiB with at most two decimals); `-` for none. */
export function compactSlots(json: string): string {
  let s: unknown;
  try {
    s = JSON.parse(json || '{}');
  } catch {
    return '-';
  }
  if (!s || typeof s !== 'object') return '-';
  const m = s as Record<string, unknown>;
  const parts: string[] = [];
  if (Number(m.cpu)) parts.push(`${Number(m.cpu)} CPU`);
  const mem = Number(m.mem);
  if (mem) parts.push(mem < 2 ** 30 ? `${Math.round(mem / 2 ** 20)} MiB` : `${Number((mem / 2 ** 30).toFixed(2))} GiB`);
  for (const [k, v] of Object.entries(m)) if (isAccelSlot(k) && Number(v)) parts.push(formatAccel(String(v), k));
  return parts.join(', ') || '-';
}

/** What a session holds now, or for one that holds nothing (ended, or still waiting) what
 * it asked for, which an ended session had while it ran; `where` the agent it runs (ran) on.
 * `note` says which, for the tooltip. */
export function sessionResources(s: Pick<SessionItem, 'status' | 'occupying_slots' | 'requested_slots' | 'agent'>): { text: string; where: string; note: string } {
  const ended = FINISHED_STATES.includes(s.status);
  const where = !s.agent ? '' : ended ? `ran on ${s.agent}` : `on ${s.agent}`;
  const held = compactSlots(s.occupying_slots);
  if (held !== '-') return { text: held, where, note: 'held now' };
  const asked = compactSlots(s.requested_slots);
  if (asked === '-') return { text: '-', where, note: '' };
  if (s.status === 'PENDING') return { text: asked, where, note: 'asked for: held once it starts' };
  if (ended) return { text: asked, where, note: 'what it had' };
  return { text: asked, where, note: 'asked for' };
}

/** The status detail as the row shows it: without the code a scheduler reason starts with
 * (`no-available-instances: cpu short on 2 of 2 agents` → `cpu short on 2 of 2 agents`). */
export function statusDetail(info: string | null | undefined): string {
  if (!info) return '';
  return info.replace(/^[a-z][a-z0-9-]*[a-z0-9]: (?=\S)/, '');
}

/** An image without its registry host: `cr.backend.ai/stable/python:3.9` → `stable/python:3.9`
 * (`bai/python:3.11-bookworm` stays); the host is a first part with a dot, a colon or `localhost`. */
export function shortImage(image: string): string {
  const parts = image.split('/');
  if (parts.length > 1 && (/[.:]/.test(parts[0]) || parts[0] === 'localhost')) return parts.slice(1).join('/');
  return image;
}
