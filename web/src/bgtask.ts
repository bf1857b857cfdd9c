// Follows a background task (a session's conversion to an image) on its event stream,
// `GET /events/background-task?task_id=`: `bgtask_updated` progress, then one of
// `bgtask_done` (its message: for a conversion, the new image's id), `bgtask_failed` (why)
// or `bgtask_cancelled`, then `server_close`. A late subscriber gets the last event at once.
import type { Schema } from './api';

type BgTaskEvent = Schema<'BgTaskEvent'>;

/** What of an `EventSource` this needs (a fake one in tests). */
export interface TaskStream {
  onerror: ((ev: Event) => unknown) | null;
  readonly readyState: number;
  addEventListener(type: string, listener: (ev: MessageEvent) => void): void;
  close(): void;
}

export type TaskOutcome = 'done' | 'failed' | 'cancelled' | 'lost';

export interface TaskProgress {
  current: number;
  total: number;
  message: string;
}

export interface TaskHandlers {
  onProgress: (p: TaskProgress) => void;
  /** Called once: the outcome and its message (`lost`: the stream ended without one). */
  onEnd: (outcome: TaskOutcome, message: string) => void;
}

/** The stream of one task (same cookie authentication as `/events/session`). */
export function taskStreamUrl(taskId: string): string {
  return `/events/background-task?task_id=${encodeURIComponent(taskId)}`;
}

/** A progress in percent; null while the total is not known. */
export function percent(p: TaskProgress): number | null {
  if (!(p.total > 0)) return null;
  return Math.max(0, Math.min(100, Math.round((p.current / p.total) * 100)));
}

function parse(ev: MessageEvent): BgTaskEvent | null {
  try {
    const d: unknown = JSON.parse(String(ev.data));
    if (!d || typeof d !== 'object') return null;
    const o = d as Partial<BgTaskEvent>;
    return { task_id: String(o.task_id ?? ''), message: String(o.message ?? ''), current_progress: Number(o.current_progress ?? 0), total_progress: Number(o.total_progress ?? 0) };
  } catch {
    return null;
  }
}

const FINAL: Record<string, TaskOutcome> = { bgtask_done: 'done', bgtask_failed: 'failed', bgtask_cancelled: 'cancelled' };

/** Follows `es` until the task ends; returns the function that stops following. */
export function followTask(es: TaskStream, { onProgress, onEnd }: TaskHandlers): () => void {
  let ended = false;
  const end = (outcome: TaskOutcome, message: string) => {
    if (ended) return;
    ended = true;
    es.close();
    onEnd(outcome, message);
  };
  es.addEventListener('bgtask_updated', (ev) => {
    const d = parse(ev);
    if (d && !ended) onProgress({ current: d.current_progress, total: d.total_progress, message: d.message });
  });
  for (const [type, outcome] of Object.entries(FINAL)) {
    es.addEventListener(type, (ev) => end(outcome, parse(ev)?.message ?? ''));
  }
  es.addEventListener('server_close', () => end('lost', 'The server closed the task stream before the task ended.'));
  // An EventSource reconnects by itself after a dropped connection; a refused one (an unknown
  // task) is CLOSED and never comes back.
  es.onerror = () => {
    if (es.readyState === 2) end('lost', 'The task cannot be followed: the server refused its event stream.');
  };
  return () => {
    ended = true;
    es.onerror = null;
    es.close();
  };
}
