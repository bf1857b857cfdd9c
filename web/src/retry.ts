// Waiting through a switch of managers: while a standby takes over (`503 no-leader`), a
// leader loses its lease (`503 not-leader`) or a manager cannot reach the database
// (`503 database-unavailable`), the server changed nothing and says "try again". The API
// client (api.ts) tries such a request again for up to RETRY_WINDOW_MS in all, while a
// notice says so (`onSwitching`); every attempt has a bounded time (`timeoutFor`).

/** How long a request keeps being tried again while the platform switches managers. */
export const RETRY_WINDOW_MS = 30_000;
/** The longest one attempt may take before it is given up (the server did not answer). */
export const REQUEST_TIMEOUT_MS = 60_000;
/** The longest for requests the server answers once something has started: an app (it waits
 *  for the app to answer, up to krunner's 90 s) and a folder's SFTP session (it waits for the
 *  session to run, an image pull included). */
export const SLOW_REQUEST_TIMEOUT_MS = 300_000;
const SLOW = [/^\/session\/[^/]+\/start-service$/, /^\/folders\/[^/]+\/sftp$/];

/** How long one attempt of `method url` may take. */
export function timeoutFor(method: string, url: string): number {
  const path = url.split('?')[0];
  return method === 'POST' && SLOW.some((r) => r.test(path)) ? SLOW_REQUEST_TIMEOUT_MS : REQUEST_TIMEOUT_MS;
}
/** The first wait between attempts; each next one doubles, up to MAX_DELAY_MS. */
export const FIRST_DELAY_MS = 500;
export const MAX_DELAY_MS = 4_000;

/** The notice shown while a request waits. */
export const SWITCHING_NOTICE = 'The platform is switching managers, retrying…';

/** The problem types (their last path segment) that mean "nothing was done; try again in a moment". */
const SWITCHING = ['no-leader', 'not-leader', 'database-unavailable'];

/** Whether an answer is one to wait through: a 503 whose problem `type` ends in one of SWITCHING. */
export function isSwitching(status: number, type: string | undefined): boolean {
  if (status !== 503 || !type) return false;
  return SWITCHING.some((s) => type === s || type.endsWith(`/${s}`));
}

/** The wait before attempt `n + 1` (n ≥ 1), at most what is left of the window. */
export function delayAfter(n: number, leftMs: number): number {
  const d = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.max(0, n - 1));
  return Math.max(0, Math.min(d, leftMs));
}

/** Time, as the retry loop sees it (tests give a fake one). */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** An error the retry loop can judge: an HTTP status and a problem type. */
export interface Judged {
  status: number;
  type?: string;
}

function judged(e: unknown): Judged | null {
  if (e && typeof e === 'object' && typeof (e as Judged).status === 'number') return e as Judged;
  return null;
}

// Who listens for the notice, and how many requests wait now.
let waiting = 0;
const listeners = new Set<(waiting: boolean) => void>();

/** Calls `f(true)` when a first request starts waiting and `f(false)` when none waits any
 *  more; returns the unsubscribe function. */
export function onSwitching(f: (waiting: boolean) => void): () => void {
  listeners.add(f);
  return () => listeners.delete(f);
}

/** Whether some request waits for a manager now. */
export function isWaiting(): boolean {
  return waiting > 0;
}

function setWaiting(delta: 1 | -1) {
  const before = waiting > 0;
  waiting += delta;
  const after = waiting > 0;
  if (before !== after) for (const f of listeners) f(after);
}

/** Runs `attempt` (given its number, from 1) and, while it fails with a switching 503, again
 *  after a growing pause, as long as the next attempt starts within `windowMs` of the first.
 *  Any other outcome (a success, another error, the window spent) is returned or thrown as
 *  the last attempt gave it. */
export async function retrying<T>(attempt: (n: number) => Promise<T>, clock: Clock = realClock, windowMs = RETRY_WINDOW_MS): Promise<T> {
  const start = clock.now();
  let n = 1;
  let counted = false;
  try {
    for (;;) {
      try {
        return await attempt(n);
      } catch (e) {
        const j = judged(e);
        if (!j || !isSwitching(j.status, j.type)) throw e;
        const left = start + windowMs - clock.now();
        if (left <= 0) throw e;
        if (!counted) {
          counted = true;
          setWaiting(1);
        }
        await clock.sleep(delayAfter(n, left));
        n += 1;
      }
    }
  } finally {
    if (counted) setWaiting(-1);
  }
}

/** A new `Idempotency-Key` for a create: 32 hex digits from the browser's random source
 *  (`crypto.getRandomValues`, which a page served over plain HTTP has too, unlike
 *  `crypto.randomUUID`). */
export function newIdempotencyKey(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** Whether a request is a session create, which carries an `Idempotency-Key` so that its
 *  retries make one session. */
export function isSessionCreate(method: string, url: string): boolean {
  return method === 'POST' && url.split('?')[0] === '/session';
}
