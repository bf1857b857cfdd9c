// The launcher's validation rules. They mirror the server's (which enforces them all again):
// session names (bai_core::name), environment variable names, resources, accelerators,
// preopen ports.
import { AccelOffer, formatAccel, migProfile, toMilli } from './accel';

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
    if (p === 2001) return { ports, problem: `${p} is taken by the session's runner.` };
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
  if (r.shmemGiB >= r.memGiB) return 'Memory must be larger than the shared memory it holds.';
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
  if (migProfile(offer.slot) && amount !== 1) return `A kernel takes one ${offer.unit} instance: ask for 1 (CUDA sees one MIG instance in a process).`;
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

// Model serving (bai_manager::serving): service names, replica counts, per-replica resources,
// token lifetimes and auto-scaling rules.

/** At most this many replicas per service (the server's MAX_REPLICAS). */
export const MAX_REPLICAS = 16;

/** Service names: 4–64 letters, digits, '_' and '-', not starting or ending with '-'. Empty:
 *  the server picks one. */
export function serviceName(name: string): Problem {
  if (name === '') return null;
  const n = [...name].length;
  if (n < 4) return 'Use at least 4 characters.';
  if (n > 64) return 'Use at most 64 characters.';
  const bad = [...name].find((c) => !/[A-Za-z0-9_-]/.test(c));
  if (bad !== undefined) return `"${bad}" is not allowed: use letters, digits, '_' or '-'.`;
  if (name.startsWith('-') || name.endsWith('-')) return "Do not start or end with '-'.";
  return null;
}

/** A replica count as typed: a whole number from 0 to 16. */
export function replicas(text: string): Problem {
  const t = text.trim();
  if (t === '') return 'Give a number of replicas.';
  if (!/^-?\d+$/.test(t)) return `"${t}" is not a whole number.`;
  const n = Number(t);
  if (n < 0 || n > MAX_REPLICAS) return `${n} is out of range: a service runs 0 to ${MAX_REPLICAS} replicas.`;
  return null;
}

/** CPU cores per replica as typed: a positive number such as 1 or 0.5. */
export function cpuCores(text: string): Problem {
  const t = text.trim();
  const n = Number(t);
  if (t === '' || !/^\d*\.?\d+$/.test(t) || !(n > 0)) return 'Give a positive number of cores, like 1 or 0.5.';
  return null;
}

const SIZE_SHIFT: Record<string, number> = { '': 0, b: 0, k: 10, kb: 10, kib: 10, m: 20, mb: 20, mib: 20, g: 30, gb: 30, gib: 30, t: 40, tb: 40, tib: 40 };
/** Below this a kernel cannot start (the server's MIN_MEM). */
export const MIN_MEM = 64 * 2 ** 20;

/** A size as the server reads it (`512m`, `1.5g`, `2 GiB`, bare bytes), in bytes; null when
 *  it is not one. */
export function parseSize(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?|\.\d+)\s*([a-z]*)$/.exec(text.trim().toLowerCase());
  if (!m || !(m[2] in SIZE_SHIFT)) return null;
  return Math.round(Number(m[1]) * 2 ** SIZE_SHIFT[m[2]]);
}

/** Memory per replica as typed: a size of at least 64 MiB. */
export function memSize(text: string): Problem {
  const b = parseSize(text);
  if (b === null) return 'Give a size like 256m, 1g or 2GiB.';
  if (b < MIN_MEM) return 'At least 64 MiB is needed.';
  return null;
}

/** A token lifetime: seconds, or `30m`, `12h`, `3d`, `1w` (terms may be combined: `1h30m`). */
export function duration(text: string): Problem {
  const t = text.trim().toLowerCase();
  if (t === '') return 'Give a lifetime, like 3600, 12h or 3d.';
  const num = /^\d*\.?\d+$/.test(t);
  if (!num && !/^(\d*\.?\d+\s*[smhdw]\s*)+$/.test(t)) return `"${text.trim()}" is not a duration: use seconds or 30m, 12h, 3d.`;
  const secs = num ? Number(t) : [...t.matchAll(/(\d*\.?\d+)\s*([smhdw])/g)].reduce((s, m) => s + Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[m[2] as 's']!, 0);
  if (!(secs >= 0.5)) return 'The lifetime must be longer than 0 seconds.';
  return null;
}

/** The metric names each source offers, as the server's `metrics_of`. */
export const RULE_METRICS: Record<'KERNEL' | 'INFERENCE_FRAMEWORK', string[]> = {
  KERNEL: ['cpu_util', 'mem'],
  INFERENCE_FRAMEWORK: ['inflight', 'requests_per_second', 'latency_ms'],
};

/** An auto-scaling rule as the form holds it (numbers as typed). */
export interface RuleDraft {
  mode: 'threshold' | 'target';
  metric_source: 'KERNEL' | 'INFERENCE_FRAMEWORK';
  metric_name: string;
  threshold: string;
  comparator: 'LESS_THAN' | 'LESS_THAN_OR_EQUAL' | 'GREATER_THAN' | 'GREATER_THAN_OR_EQUAL' | null;
  step_size: string;
  target: string;
  min_replicas: string;
  max_replicas: string;
  cooldown_seconds: string;
  scale_up_delay_seconds: string;
  scale_down_delay_seconds: string;
  priority: string;
}

export type RuleField = keyof RuleDraft;

const isNumber = (t: string) => /^-?\d*\.?\d+$/.test(t.trim());
const isWhole = (t: string) => /^-?\d+$/.test(t.trim());

/** The problems of a rule, by field, as the server's `Rule::check` finds them. */
export function rule(r: RuleDraft): Partial<Record<RuleField, string>> {
  const out: Partial<Record<RuleField, string>> = {};
  const metrics = RULE_METRICS[r.metric_source];
  if (!metrics.includes(r.metric_name)) out.metric_name = `Use one of ${metrics.join(', ')}.`;
  const count = (k: 'min_replicas' | 'max_replicas', needed: boolean) => {
    const t = r[k].trim();
    if (t === '') {
      if (needed) out[k] = 'A target rule needs it.';
      return null;
    }
    if (!isWhole(t) || Number(t) < 0) out[k] = 'Use a whole number of 0 or more.';
    else if (Number(t) > MAX_REPLICAS) out[k] = `At most ${MAX_REPLICAS} replicas.`;
    else return Number(t);
    return null;
  };
  const lo = count('min_replicas', r.mode === 'target');
  const hi = count('max_replicas', r.mode === 'target');
  if (lo !== null && hi !== null && lo > hi) out.min_replicas = 'It is more than the maximum.';
  for (const k of ['scale_up_delay_seconds', 'scale_down_delay_seconds'] as const)
    if (r[k].trim() !== '' && (!isNumber(r[k]) || Number(r[k]) < 0)) out[k] = 'Use 0 or more seconds.';
  if (r.cooldown_seconds.trim() !== '' && (!isWhole(r.cooldown_seconds) || Number(r.cooldown_seconds) < 0)) out.cooldown_seconds = 'Use a whole number of seconds.';
  if (r.priority.trim() !== '' && !isWhole(r.priority)) out.priority = 'Use a whole number.';
  if (r.mode === 'threshold') {
    if (!isNumber(r.threshold)) out.threshold = 'Give a number.';
    if (!r.comparator) out.comparator = 'Choose a comparison.';
    if (!isWhole(r.step_size) || Number(r.step_size) === 0) out.step_size = 'Give a whole number other than 0 (negative scales in).';
  } else if (!isNumber(r.target) || !(Number(r.target) > 0)) {
    out.target = 'Give a number above 0: the value each replica should see.';
  }
  return out;
}

/** The field of the create-service form a server problem concerns, from the start of its
 *  message (`config.model: …`, `replicas 99 is …`, `mem="1" is …`); null: none in particular. */
export function serviceProblemField(msg: string): 'name' | 'model' | 'image' | 'replicas' | 'cpu' | 'mem' | null {
  if (/^name\b|a service named/.test(msg)) return 'name';
  if (/^config\.model|^model-definition\.ya?ml|^[^ ]+\.ya?ml in model folder|model folder/.test(msg)) return 'model';
  if (/^(replicas|desired_session_count)\b/.test(msg)) return 'replicas';
  if (/^image\b|^the image|\bimage\b.*\bnot found/i.test(msg)) return 'image';
  if (/^cpu\b/.test(msg)) return 'cpu';
  if (/^(mem|shmem)\b|shared memory/.test(msg)) return 'mem';
  return null;
}

/** The field of the rule form a server problem concerns (the server's messages start with
 *  it: `threshold "x" is not a number`, `min_replicas 3 is more than …`). */
export function ruleProblemField(msg: string): RuleField | null {
  const first = /^"?([a-z_]+)/.exec(msg)?.[1] ?? '';
  const fields: RuleField[] = ['mode', 'metric_source', 'metric_name', 'threshold', 'comparator', 'step_size', 'target', 'min_replicas', 'max_replicas', 'cooldown_seconds', 'scale_up_delay_seconds', 'scale_down_delay_seconds', 'priority'];
  return fields.find((f) => f === first) ?? null;
}

// Images (bai_manager::images): a session converted to an image, an image's minimum resources.

/** The name of an image made from a session: 4–32 letters, digits, '-' and '_' (the
 *  server's `check_name`). */
export function imageName(name: string): Problem {
  const n = [...name].length;
  if (n === 0) return 'Give the image a name.';
  if (n < 4) return 'Use at least 4 characters.';
  if (n > 32) return 'Use at most 32 characters.';
  const bad = [...name].find((c) => !/[A-Za-z0-9_-]/.test(c));
  if (bad !== undefined) return `"${bad}" is not allowed: use letters, digits, '-' or '_'.`;
  return null;
}

/** Why a session cannot be converted to an image now (only RUNNING interactive sessions
 *  can); null: it can. */
export function commitRefusal(s: { status: string; type: string }): Problem {
  if (s.type !== 'interactive') return `Only interactive sessions can be converted to an image; this is a ${s.type} session.`;
  if (s.status !== 'RUNNING') return `Only a RUNNING session can be converted to an image; this one is ${s.status}.`;
  return null;
}

/** Resources below what the chosen image needs (its `ai.backend.resource.min.*` labels), by
 *  field. */
export function imageMinimum(r: { cpu: number; memGiB: number }, min: { cpu: number; memGiB: number }): { cpu?: string; memGiB?: string } {
  const out: { cpu?: string; memGiB?: string } = {};
  if (min.cpu > 0 && r.cpu < min.cpu) out.cpu = `This image needs at least ${min.cpu} CPU core${min.cpu === 1 ? '' : 's'}.`;
  if (min.memGiB > 0 && r.memGiB < min.memGiB - 1e-9) {
    const m = min.memGiB < 1 ? `${Math.round(min.memGiB * 1024)} MiB` : `${Math.round(min.memGiB * 100) / 100} GiB`;
    out.memGiB = `This image needs at least ${m} of memory.`;
  }
  return out;
}

/** The emails of a text (separated by commas, spaces or new lines), or why they are not. */
export function parseEmails(text: string): { emails: string[]; problem: string | null } {
  const emails = text
    .split(/[\s,;]+/)
    .map((e) => e.trim())
    .filter((e) => e.length > 0);
  if (emails.length === 0) return { emails, problem: 'Enter at least one email.' };
  const bad = emails.find((e) => !/^[^@\s]+@[^@\s]+$/.test(e));
  return { emails, problem: bad ? `${bad} is not an email address.` : null };
}
