// An agent's row on the Agents page, kept to two lines a cell (at 1280 × 800 too): what it
// has free of its capacity, its devices in a few words, its heartbeat time.
import { formatSlotMap, Schema } from './api';
import { displayUnit, formatDevice, formatGiB } from './accel';

type Agent = Schema<'Agent'>;

/** Line one `3 CPU, 6 GiB free`, line two `of 4 CPU, 8 GiB`, and all three maps for the tooltip. */
export function resourceLines(a: Pick<Agent, 'capacity' | 'used' | 'free'>): { free: string; of: string; full: string } {
  const cap = formatSlotMap(a.capacity);
  const free = formatSlotMap(a.free);
  return {
    free: `${free} free`,
    of: `of ${cap}`,
    full: `capacity ${cap}; used ${formatSlotMap(a.used)}; free ${free}`,
  };
}

/** Line one `2 × Mock GPU` (or `3 devices` of mixed models), line two `mock · 8 GiB each`
 * (`cuda · 80 GiB each`); `lines` has each device in full. `none` for an agent without any. */
export function deviceSummary(devices: Agent['devices']): { text: string; detail: string; lines: string[] } {
  if (!devices.length) return { text: 'none', detail: '', lines: [] };
  const lines = devices.map((d) => `${displayUnit(d.slot)} ${d.id}: ${formatDevice(d)}${d.plugin === 'mock' ? ' (mock)' : ''}`);
  const models = new Set(devices.map((d) => d.model));
  const plugins = [...new Set(devices.map((d) => d.plugin))].join(', ');
  const mems = new Set(devices.map((d) => d.memory));
  const text = models.size === 1 ? `${devices.length} × ${devices[0].model}` : `${devices.length} devices`;
  const each = mems.size === 1 ? ` · ${formatGiB(devices[0].memory)}${devices.length > 1 ? ' each' : ''}` : '';
  return { text, detail: `${plugins}${each}`, lines };
}

/** The heartbeat time in a few characters: `08:12:01 UTC` on the day it is `now` (UTC), else
 * `2026-11-28 08:12 UTC`; `full` is `2026-11-29 08:12:01 UTC`. */
export function heartbeat(t: string, now: Date = new Date()): { short: string; full: string } {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2})?/.exec(t || '');
  if (!m) return { short: '-', full: '-' };
  const [, day, hm, sec = ''] = m;
  const full = `${day} ${hm}${sec} UTC`;
  const today = now.toISOString().slice(0, 10) === day;
  return { short: today ? `${hm}${sec} UTC` : `${day} ${hm} UTC`, full };
}
