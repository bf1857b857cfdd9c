// Keeps a view fresh from the session event stream (`/events/session`).
//
// One stream serves the page for its whole life: a view that changes what it shows (a tab
// switch) changes the `refresh` it hands over, not the stream. Re-opening the stream would
// lose whatever was published while the new one connects — a session that turns TERMINATED
// just then would never show up under Finished.

import { eventNameValues, type components } from './api-types';

type EventName = components['schemas']['EventName'];

/**
 * The lifecycle events that change what a session list shows: the session events of the one
 * list of event names the server declares (generated into `api-types.ts` from its schema).
 */
export const LIFECYCLE_EVENTS: readonly EventName[] = eventNameValues.filter((n) =>
  n.startsWith('session_'),
);

/** What of an `EventSource` this needs (a fake one in tests). */
export interface EventStream {
  onopen: ((ev: Event) => unknown) | null;
  addEventListener(type: string, listener: (ev: MessageEvent) => void): void;
  close(): void;
}

export interface Follow {
  /** The newest refresh of the view; read at every use, never captured. */
  refresh: () => () => void;
  /** Each lifecycle event with its parsed data (malformed data is skipped). */
  onEvent?: (type: string, data: Record<string, unknown>) => void;
  /** Events closer together than this make one refresh. */
  debounceMs?: number;
}

/**
 * Follows `es`: every (re)connection refreshes once (what happened while the stream was down
 * is fetched), and each burst of lifecycle events refreshes once after `debounceMs`.
 * Returns the function that stops following and closes the stream.
 */
export function followSessions(es: EventStream, { refresh, onEvent, debounceMs = 150 }: Follow): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  es.onopen = () => refresh()();
  const listener = (ev: MessageEvent) => {
    let data: unknown;
    try {
      data = JSON.parse(String(ev.data));
    } catch {
      data = undefined;
    }
    if (onEvent && data && typeof data === 'object') onEvent(ev.type, data as Record<string, unknown>);
    clearTimeout(timer);
    timer = setTimeout(() => refresh()(), debounceMs);
  };
  for (const t of LIFECYCLE_EVENTS) es.addEventListener(t, listener);
  return () => {
    clearTimeout(timer);
    es.onopen = null;
    es.close();
  };
}
