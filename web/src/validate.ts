// The launcher's validation rules. They mirror the server's (which enforces them all again):
// session names (bai_core::name), environment variable names, resources, accelerators,
// preopen ports.
import { AccelOffer, formatAccel, toMilli } from './accel';

export type Problem = string | null;

/** Session names: 4–64 letters, digits, '-', '_', '.'; first and last a letter, digit or '_'. */
export function sessionName(name: string): Problem {
  if (name === '') return null; // optional: the server picks a name
  const n = [...name].length;
  if (n < 4) return 'Use at least 4 characters.';
  if (n > 64) return 'Use at most 64 characters.';
  const bad = [...name].find((c) => !/[A-Za-z0-9._-]/.test(c));
  if (bad !== undefined) return `"${bad}" is not allowed: use letters, digits, '-', '_' or '.'.`;
  const edge = /[A-Za-z0-9_]/;
  if (!edge.test(name[0]) || !edge.test(name[name.length - 1]))
    return "Start and end with a letter, a digit or '_'.";
  return null;
}

/** Environment variable names: letters, digits, '_', not starting with a digit. */
export function envName(name: string): Problem {
  if (name === '') return 'Give the variable a name.';
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    return "Use letters, digits and '_', not starting with a digit.";
  if (name.startsWith('BAI_')) return 'Names starting with BAI_ are reserved.';
  return null;
}

/** Cluster size: 1 to 64 containers (a resource policy may allow fewer; the server says so). */
export function clusterSize(n: number): Problem {
  if (!Number.isInteger(n) || n < 1) return 'Use a whole number of at least 1.';
  if (n > 64) return 'At most 64 containers per session.';
  return null;
}

/** Preopen ports: 1024–65535, separated by commas or spaces, no duplicates, at most 16. */
export function preopenPorts(text: string): { ports: number[]; problem: Problem } {
  const words = text.split(/[\s,]+/).filter((w) => w !== '');
  const ports: number[] = [];
  for (const w of words) {
    if (!/^\d+$/.test(w)) return { ports, problem: `"${w}" is not a port number.` };
    const p = Number(w);
    if (p < 1024 || p > 65535) return { ports, problem: `${p} is out of range: use 1024 to 65535.` };
    if (ports.includes(p)) return { ports, problem: `${p} is given twice.` };
    if (p === 2200 || p === 7681) return { ports, problem: `${p} is taken by a built-in app.` };
    ports.push(p);
  }
  if (ports.length > 16) return { ports, problem: 'At most 16 ports.' };
  return { ports, problem: null };
}

export interface Resources {
  cpu: number; // cores
  memGiB: number;
  shmemGiB: number;
}

/** Resource rules: positive CPU and memory within the limits; shared memory ≤ memory. */
export function resources(r: Resources, max: { cpu: number; memGiB: number }): Problem {
  if (!(r.cpu > 0)) return 'Give at least some CPU.';
  if (r.cpu > max.cpu) return `At most ${max.cpu} CPU cores are allowed.`;
  if (!(r.memGiB > 0)) return 'Give at least some memory.';
  if (r.memGiB > max.memGiB) return `At most ${max.memGiB} GiB of memory is allowed.`;
  if (r.shmemGiB < 0) return 'Shared memory cannot be negative.';
  if (r.shmemGiB > r.memGiB) return 'Shared memory cannot be more than the memory.';
  return null;
}

/** An AI accelerator amount against what the resource group offers (`accelOffer`): whole
 *  GPUs for whole-device slots, multiples of the quantum for shares (the server checks
 *  both again), at most what one agent has free. */
export function accelerator(amount: number, offer: AccelOffer | null): Problem {
  if (!Number.isFinite(amount)) return 'Give a number.';
  if (amount < 0) return 'The accelerator amount cannot be negative.';
  if (amount === 0) return null;
  if (!offer) return 'This resource group has no AI accelerators.';
  const milli = amount * 1000;
  if (offer.whole && !Number.isInteger(amount))
    return `The ${offer.unit}s of this cluster are not shared: ask for whole ${offer.unit}s (1, 2, …).`;
  if (Math.abs(milli - Math.round(milli)) > 1e-6) return `Use at most 3 decimals (${offer.unit}).`;
  const q = offer.quantumMilli;
  if (q && toMilli(amount) % q !== 0) return `Use a multiple of ${formatAccel(q / 1000, offer.slot)}.`;
  if (amount > offer.max)
    return offer.max > 0
      ? `At most ${formatAccel(offer.max, offer.slot)} is free on one agent of this resource group.`
      : `No ${offer.unit} is free in this resource group now.`;
  return null;
}

/** Batch sessions need a startup command; a timeout is a positive number of seconds. */
export function batch(command: string, timeoutSecs: number | null): Problem {
  if (command.trim() === '') return 'A batch session needs a startup command.';
  if (timeoutSecs !== null && !(timeoutSecs > 0)) return 'The timeout must be a positive number of seconds.';
  return null;
}

/** Data folder names: 1–64 letters, digits, '.', '-', '_' (a leading '.' makes an automount
 *  folder); the server also refuses reserved names such as `.bashrc`. */
export function folderName(name: string): Problem {
  if (name === '') return 'Give the folder a name.';
  if (name.length > 64) return 'Use at most 64 characters.';
  if (name === '.' || name === '..') return `"${name}" is not a folder name.`;
  const bad = [...name].find((c) => !/[A-Za-z0-9._-]/.test(c));
  if (bad !== undefined) return `"${bad}" is not allowed: use letters, digits, '.', '-' or '_'.`;
  return null;
}

/** A file or directory name inside a folder: no '/', not '.' or '..', at most 255 bytes. */
export function entryName(name: string): Problem {
  if (name === '') return 'Give a name.';
  if (name.includes('/') || name === '.' || name === '..') return "Use a plain name without '/'.";
  if (new TextEncoder().encode(name).length > 255) return 'Use at most 255 bytes.';
  return null;
}
