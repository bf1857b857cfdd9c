// AI accelerators as the UI shows them: slot names in the user's units (`cuda.device` →
// GPU, whole numbers; `cuda.shares` → fGPU, two decimals), what a resource group can still
// give (from `GET /agents`), and the per-device series of a session's stats samples.
// Amounts on the wire are decimal strings ("0.5"); arithmetic is in milli-units, like the
// server's, so 0.1 + 0.2 steps never drift.
import type { components } from './api-types';

type Agent = components['schemas']['Agent'];
type Sample = components['schemas']['StatSample'];
export type Device = components['schemas']['AgentDevice'];

/** Whole NVIDIA GPUs. */
export const CUDA_DEVICE = 'cuda.device';
/** Fractional NVIDIA GPUs (fGPU). */
export const CUDA_SHARES = 'cuda.shares';

/** The step of a fractional slot the cluster says nothing about (0.1). */
const DEFAULT_STEP_MILLI = 100;

/** The MIG profile of a slot of MIG instances (Backend.AI's `cuda.device:<profile>-mig`,
 *  offered by Kubernetes nodes under NVIDIA's mixed strategy): `1g.18gb`; null for others. */
export function migProfile(slot: string): string | null {
  const m = /^cuda\.device:(.+)-mig$/.exec(slot);
  return m ? m[1] : null;
}

/** Slots named `<key>.device` count whole devices, and so do MIG instances; every other
 *  accelerator slot is a share. */
export function isWhole(slot: string): boolean {
  return slot.endsWith('.device') || migProfile(slot) !== null;
}

/** The unit a user reads for a slot: `GPU`, `fGPU`, `MIG 1g.18gb`, or the slot's own name. */
export function displayUnit(slot: string): string {
  const mig = migProfile(slot);
  if (mig) return `MIG ${mig}`;
  return slot === CUDA_DEVICE ? 'GPU' : slot === CUDA_SHARES ? 'fGPU' : slot;
}

/** Whether a key of a slot map is an accelerator slot (anything but CPU and memory). */
export function isAccelSlot(key: string): boolean {
  return key !== 'cpu' && key !== 'mem';
}

/** `"0.5"` or `0.5` → `500`; what is not a number is 0. */
export function toMilli(amount: number | string): number {
  const n = Number(amount);
  return Number.isFinite(n) ? Math.round(n * 1000) : 0;
}

/** An amount in the slot's form, without the unit: `1` for GPUs, `0.50` for shares. */
export function formatAmount(amount: number | string, slot: string): string {
  const milli = toMilli(amount);
  if (isWhole(slot) && milli % 1000 === 0) return String(milli / 1000);
  return (milli / 1000).toFixed(milli % 10 === 0 ? 2 : 3);
}

/** An amount with its unit: `1 GPU`, `0.50 fGPU`, `0.25 mock.shares`. */
export function formatAccel(amount: number | string, slot: string): string {
  return `${formatAmount(amount, slot)} ${displayUnit(slot)}`;
}

/** `85899345920` → `80 GiB`, `85520809984` → `79.6 GiB`. */
export function formatGiB(bytes: number): string {
  const g = Math.round((bytes / 2 ** 30) * 10) / 10;
  return `${Number.isInteger(g) ? g : g.toFixed(1)} GiB`;
}

/** One device in a line: `NVIDIA H100 80GB HBM3 · 80 GiB · 1 fGPU`. */
export function formatDevice(d: Device): string {
  return `${d.model} · ${formatGiB(d.memory)} · ${formatAccel(d.capacity, d.slot)}`;
}

/** What a resource group offers of an accelerator, as the launcher's field shows it. */
export interface AccelOffer {
  /** The slot the request names (`cuda.device`, `cuda.shares`, `mock.shares`). */
  slot: string;
  /** `GPU`, `fGPU` or the slot's name. */
  unit: string;
  /** Whole devices only. */
  whole: boolean;
  /** The step the server checks requests against, milli-units (1000 for whole devices);
   *  null where the cluster sets none (a dummy agent's shares). */
  quantumMilli: number | null;
  /** The field's step. */
  step: number;
  /** The most one agent can still give (its free amount, down to a multiple of the step). */
  max: number;
  /** Decimals to show: 0 for whole devices, 2 for shares. */
  precision: number;
}

/** The accelerators the agents of `group` offer (those `agent` has, where one is chosen),
 *  devices' slots before plain capacity keys (a Kubernetes node offers whole GPUs, shares or
 *  MIG instances as capacity), each as `offerOf` says. A kernel takes one of them. */
export function accelOffers(agents: Agent[], group: string, agent?: string | null): AccelOffer[] {
  const inGroup = agents.filter((a) => a.scaling_group === group && (!agent || a.id === agent));
  const slots: string[] = [];
  for (const a of inGroup) for (const d of a.devices) if (!slots.includes(d.slot)) slots.push(d.slot);
  for (const a of inGroup) for (const k of Object.keys(a.capacity)) if (isAccelSlot(k) && !slots.includes(k)) slots.push(k);
  return slots.map((slot) => offerOf(agents, inGroup, slot));
}

/** The accelerator of `group` (of `agent`, where one is chosen) a launch asks for: `slot`
 *  where it is offered, else the first offered. Null where the group has no accelerator. */
export function accelOffer(agents: Agent[], group: string, agent?: string | null, slot?: string | null): AccelOffer | null {
  const offers = accelOffers(agents, group, agent);
  return offers.find((o) => o.slot === slot) ?? offers[0] ?? null;
}

/** One accelerator slot of `inGroup`: its unit, step (the coarsest quantum of the cluster's
 *  devices of that slot, as the server checks it; 1 for whole devices) and the largest free
 *  amount on one alive agent (one for MIG instances: a kernel takes one). */
function offerOf(agents: Agent[], inGroup: Agent[], slot: string): AccelOffer {
  const whole = isWhole(slot);
  // The server takes the coarsest quantum of every agent's devices of the slot.
  const quanta = agents.flatMap((a) => a.devices.filter((d) => d.slot === slot).map((d) => toMilli(d.quantum))).filter((q) => q > 0);
  const quantumMilli = whole ? 1000 : quanta.length ? Math.max(...quanta) : null;
  const stepMilli = quantumMilli ?? DEFAULT_STEP_MILLI;
  let freeMilli = 0;
  for (const a of inGroup) if (a.alive) freeMilli = Math.max(freeMilli, toMilli(a.free[slot] ?? 0));
  if (migProfile(slot)) freeMilli = Math.min(freeMilli, 1000);
  const maxMilli = Math.floor(freeMilli / stepMilli) * stepMilli;
  return { slot, unit: displayUnit(slot), whole, quantumMilli, step: stepMilli / 1000, max: maxMilli / 1000, precision: whole ? 0 : 2 };
}

/** What a session's devices are called, from its requested slots (JSON text such as
 *  `{"cpu": "1", "cuda.shares": "0.5"}`): `GPU` for CUDA slots, else `Accelerator`. */
export function deviceKind(slotsJson: string): string {
  let keys: string[] = [];
  try {
    const s: unknown = JSON.parse(slotsJson || '{}');
    if (s && typeof s === 'object') keys = Object.keys(s);
  } catch {
    /* not JSON: no slots */
  }
  return keys.some((k) => k.startsWith('cuda.')) ? 'GPU' : 'Accelerator';
}

/** One device's readings over a session's samples, for its small charts. */
export interface DeviceSeries {
  device: string;
  /** Busy time, percent, one value per sample that has the device. */
  util: number[];
  /** Device memory in use, bytes. */
  memUsed: number[];
  /** What the kernel may use of the device's memory, bytes (the latest reading). */
  memTotal: number;
}

/** The per-device series of `samples`, devices in the order they first appear; none for a
 *  session without accelerators. */
export function deviceSeries(samples: Sample[]): DeviceSeries[] {
  const out: DeviceSeries[] = [];
  for (const s of samples) {
    for (const r of s.devices ?? []) {
      let d = out.find((x) => x.device === r.device);
      if (!d) {
        d = { device: r.device, util: [], memUsed: [], memTotal: 0 };
        out.push(d);
      }
      d.util.push(r.util);
      d.memUsed.push(r.mem_used);
      d.memTotal = r.mem_total;
    }
  }
  return out;
}
