// What the session launcher sets (also what Recent History keeps), its problems by launcher
// page, and the body of `POST /session` it makes.
import { Schema } from './api';
import * as v from './validate';
import { AccelOffer, isAccelSlot, toMilli } from './accel';
import { DEFAULT_IMAGE, ImageNode, Minimum, minimumOf, raiseTo } from './images';

/** Everything the launcher sets; also what Recent History keeps. */
export interface LaunchSettings {
  type: Schema<'SessionType'>;
  name: string;
  startupCommand: string;
  startsAt: string | null;
  timeoutSecs: number | null;
  ownerEmail: string;
  ownerAccessKey: string | null;
  project: string;
  environment: string;
  image: string;
  env: { key: string; value: string }[];
  group: string;
  preset: string | null;
  cpu: number;
  memGiB: number;
  shmemGiB: number;
  accelerator: number;
  /** The accelerator slot asked for where the group offers several (whole GPUs, shares,
   *  MIG instances); null: the first offered. */
  accelSlot: string | null;
  count: number;
  agent: string | null;
  clusterMode: Schema<'ClusterMode'>;
  clusterSize: number;
  ompThreads: number | null;
  openblasThreads: number | null;
  mounts: string[];
  preopen: string;
  /** Inference: the model folder the service serves (usage mode `model`). */
  model: string;
  /** Inference: the replicas the service runs. */
  replicas: number;
  /** Inference: the endpoint takes calls without a token. */
  openToPublic: boolean;
}

export const DEFAULTS: LaunchSettings = {
  type: 'interactive', name: '', startupCommand: '', startsAt: null, timeoutSecs: null, ownerEmail: '',
  ownerAccessKey: null, project: 'default', environment: DEFAULT_IMAGE, image: '', env: [], group: 'default', preset: null,
  cpu: 1, memGiB: 1, shmemGiB: 0.0625, accelerator: 0, accelSlot: null, count: 1, agent: null, clusterMode: 'single-node',
  clusterSize: 1, ompThreads: null, openblasThreads: null, mounts: [], preopen: '', model: '', replicas: 1, openToPublic: false,
};

/** Settings kept earlier (Recent History on the server), completed with the defaults of what
 *  was added to the launcher since. */
export function completeSettings(s: Partial<LaunchSettings>): LaunchSettings {
  return { ...DEFAULTS, ...s };
}

/** An Inference launch makes a model service (the Serving page's), not a bare session. */
export const isService = (s: LaunchSettings) => s.type === 'inference';

export interface HistoryEntry {
  id: string;
  label: string;
  pinned: boolean;
  at: string;
  settings: LaunchSettings;
}
/** The key an earlier UI kept every user's history under in the browser; removed on sight. */
export const OLD_HISTORY_KEY = 'bai.launcher.history';

/** The most entries the server keeps. */
export const MAX_HISTORY = 20;

/** The five most recent entries, pinned ones kept first (and kept whatever their age, up
 * to the server's limit). */
export function trimHistory(h: HistoryEntry[]): HistoryEntry[] {
  const pinned = h.filter((e) => e.pinned);
  const rest = h.filter((e) => !e.pinned).slice(0, Math.max(0, 5 - pinned.length));
  return [...pinned, ...rest].slice(0, MAX_HISTORY);
}

export const STEPS = ['Session type', 'Environments & Resource allocation', 'Data & Storage', 'Network', 'Confirm and Launch'];

/** The slider steps of CPU (cores) and memory (GiB). */
export const CPU_STEP = 0.5;
export const MEM_STEP = 0.25;

/** `s` with `image` chosen: CPU and memory raised to at least what the image needs. */
export function withImage(s: LaunchSettings, image: ImageNode): LaunchSettings {
  const min = minimumOf(image);
  return { ...s, environment: image.canonical_name, cpu: raiseTo(s.cpu, min.cpu, CPU_STEP), memGiB: raiseTo(s.memGiB, min.memGiB, MEM_STEP) };
}

/** What the launcher knows of the image to launch: the least it needs, and a problem with
 *  the choice itself (an image the catalogue does not have any more). */
export interface ImageCheck {
  min: Minimum;
  problem: v.Problem;
}

/** Every problem of the settings, by step. */
export function problems(
  s: LaunchSettings,
  max: { cpu: number; memGiB: number },
  accel: AccelOffer | null,
  image: ImageCheck = { min: { cpu: 0, memGiB: 0 }, problem: null },
): { step: number; text: string }[] {
  const out: { step: number; text: string }[] = [];
  const add = (step: number, p: v.Problem) => p && out.push({ step, text: p });
  if (isService(s)) {
    // A model service: its name follows the service rules, and it serves a model folder.
    add(0, v.serviceName(s.name));
    add(0, s.model ? null : 'Choose a model folder.');
  } else {
    add(0, v.sessionName(s.name));
  }
  if (s.ownerEmail !== '' && !s.ownerAccessKey) add(0, "Search for the owner's email first, or turn off the owner assignment.");
  if (s.type === 'batch') add(0, v.batch(s.startupCommand, s.timeoutSecs));
  s.env.forEach((e) => add(1, v.envName(e.key)));
  add(1, v.resources({ cpu: s.cpu, memGiB: s.memGiB, shmemGiB: s.shmemGiB }, max));
  const below = v.imageMinimum(s, image.min);
  add(1, below.cpu ?? null);
  add(1, below.memGiB ?? null);
  add(1, v.accelerator(s.accelerator, accel));
  add(1, v.clusterSize(s.clusterSize));
  if (isService(s)) add(1, v.replicas(String(s.replicas)));
  if (s.image === '' && s.environment === '') add(1, 'Choose an environment or give an image name.');
  add(1, image.problem);
  // A service's replicas open no extra ports (their model server's port is the definition's).
  if (!isService(s)) add(3, v.preopenPorts(s.preopen).problem);
  return out;
}

/**
 * The AI accelerator a preset asks for, in the unit of `slot` (the slot this resource group
 * offers): its value of that slot, else of the one accelerator slot it names (a preset made
 * for another kind of agent still shows what it wants, and the form says what is wrong);
 * 0 for a preset without one.
 */
export function presetAccelerator(slots: Record<string, string | undefined>, slot: string | null): number {
  const own = slot ? slots[slot] : undefined;
  const any = Object.entries(slots).find(([k, val]) => isAccelSlot(k) && Number(val) > 0)?.[1];
  const n = Number(own ?? any ?? 0);
  return Number.isFinite(n) && n > 0 ? toMilli(n) / 1000 : 0;
}

export function body(s: LaunchSettings, accelSlot: string | null): Schema<'CreateRequest'> {
  // In milli-units, as the server counts (a slider's 0.1 steps can add up to 0.30000000000000004).
  const accel = toMilli(s.accelerator) / 1000;
  const environ: Record<string, string> = {};
  for (const e of s.env) environ[e.key] = e.value;
  if (s.ompThreads) environ.OMP_NUM_THREADS = String(s.ompThreads);
  if (s.openblasThreads) environ.OPENBLAS_NUM_THREADS = String(s.openblasThreads);
  const config: Schema<'CreateConfig'> = {
    resources: { cpu: s.cpu, mem: `${Math.round(s.memGiB * 1024)}m`, ...(accel && accelSlot ? { [accelSlot]: String(accel) } : {}) },
    resource_opts: { shmem: `${Math.round(s.shmemGiB * 1024)}m` },
    environ,
    mounts: s.mounts,
    preopen_ports: v.preopenPorts(s.preopen).ports,
    scalingGroup: s.group,
  };
  if (s.preset) config.preset = s.preset;
  if (s.agent) config.agentList = [s.agent];
  return {
    name: s.name || undefined,
    image: s.image || s.environment,
    type: s.type,
    group: s.project,
    config,
    enqueueOnly: true,
    startupCommand: s.type === 'batch' ? s.startupCommand : undefined,
    starts_at: s.type === 'batch' ? s.startsAt : undefined,
    batch_timeout: s.type === 'batch' && s.timeoutSecs ? s.timeoutSecs : undefined,
    owner_access_key: s.ownerAccessKey ?? undefined,
    count: s.count > 1 ? s.count : undefined,
    clusterSize: s.clusterSize,
    clusterMode: s.clusterMode,
  };
}

