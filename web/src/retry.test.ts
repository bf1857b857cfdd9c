import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { api, ApiError, gql } from './api';
import { Clock, delayAfter, isSessionCreate, isSwitching, isWaiting, newIdempotencyKey, onSwitching, REQUEST_TIMEOUT_MS, RETRY_WINDOW_MS, retrying, SLOW_REQUEST_TIMEOUT_MS, timeoutFor } from './retry';

const PROBS = 'https://api.backend.ai/probs/';
const noLeader = () => new ApiError(503, 'No manager leads the cluster now.', 'one is taking over', `${PROBS}no-leader`);

/** A clock that moves only when the loop sleeps: every attempt is instant. */
function fakeClock(): Clock & { slept: number[] } {
  let t = 1_000_000;
  const slept: number[] = [];
  return {
    slept,
    now: () => t,
    sleep: async (ms) => {
      slept.push(ms);
      t += ms;
    },
  };
}

describe('which answers are waited through', () => {
  it('is a 503 of a switch of managers, whatever the prefix of its problem type', () => {
    for (const t of ['no-leader', 'not-leader', 'database-unavailable']) {
      expect(isSwitching(503, `${PROBS}${t}`)).toBe(true);
      expect(isSwitching(503, t)).toBe(true);
    }
    expect(isSwitching(503, `${PROBS}no-agents`)).toBe(false);
    expect(isSwitching(503, `${PROBS}xno-leader`)).toBe(false);
    expect(isSwitching(503, undefined)).toBe(false);
    expect(isSwitching(500, `${PROBS}no-leader`)).toBe(false);
  });

  it('waits longer each time, never past the window', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => delayAfter(n, 60_000))).toEqual([500, 1000, 2000, 4000, 4000, 4000]);
    expect(delayAfter(4, 1200)).toBe(1200);
    expect(delayAfter(1, -5)).toBe(0);
  });

  it('knows a session create from other requests', () => {
    expect(isSessionCreate('POST', '/session')).toBe(true);
    expect(isSessionCreate('POST', '/session?x=1')).toBe(true);
    expect(isSessionCreate('GET', '/session')).toBe(false);
    expect(isSessionCreate('POST', '/session/abc/rename')).toBe(false);
    expect(isSessionCreate('POST', '/services')).toBe(false);
  });

  it('gives requests that wait for something to start longer, and every request a bound', () => {
    expect(timeoutFor('GET', '/folders')).toBe(REQUEST_TIMEOUT_MS);
    expect(timeoutFor('POST', '/session')).toBe(REQUEST_TIMEOUT_MS);
    expect(timeoutFor('POST', '/session/s1/start-service')).toBe(SLOW_REQUEST_TIMEOUT_MS);
    expect(timeoutFor('POST', '/folders/abc/sftp')).toBe(SLOW_REQUEST_TIMEOUT_MS);
    expect(timeoutFor('GET', '/folders/abc/sftp')).toBe(REQUEST_TIMEOUT_MS);
    expect(SLOW_REQUEST_TIMEOUT_MS).toBeLessThanOrEqual(300_000);
  });

  it('makes keys the server takes: visible ASCII, at most 255, new each time', () => {
    const a = newIdempotencyKey();
    expect(a).toMatch(/^web-[0-9a-f]{32}$/);
    expect(newIdempotencyKey()).not.toBe(a);
  });
});

describe('the retry loop', () => {
  it('tries again through no-leader and answers the first success, the notice shown meanwhile', async () => {
    const clock = fakeClock();
    const seen: boolean[] = [];
    const stop = onSwitching((w) => seen.push(w));
    const attempts: number[] = [];
    const r = await retrying(async (n) => {
      attempts.push(n);
      if (n < 3) throw noLeader();
      expect(isWaiting()).toBe(true);
      return 'ok';
    }, clock);
    stop();
    expect(r).toBe('ok');
    expect(attempts).toEqual([1, 2, 3]);
    expect(clock.slept).toEqual([500, 1000]);
    expect(seen).toEqual([true, false]);
    expect(isWaiting()).toBe(false);
  });

  it('gives up with the last answer once the next attempt would start past 30 s', async () => {
    const clock = fakeClock();
    const start = clock.now();
    const starts: number[] = [];
    const e = await retrying(async () => {
      starts.push(clock.now() - start);
      throw noLeader();
    }, clock).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(503);
    expect(starts.every((t) => t <= RETRY_WINDOW_MS)).toBe(true);
    expect(starts[starts.length - 1]).toBe(RETRY_WINDOW_MS);
    expect(starts.length).toBeGreaterThan(5);
    expect(isWaiting()).toBe(false);
  });

  it('does not try again on any other error', async () => {
    for (const err of [
      new ApiError(503, 'No agents', 'none', `${PROBS}no-agents`),
      new ApiError(500, 'Error', 'boom'),
      new ApiError(0, 'No answer', 'late', 'timeout'),
      new TypeError('Failed to fetch'),
    ]) {
      const clock = fakeClock();
      let n = 0;
      await expect(retrying(async () => {
        n += 1;
        throw err;
      }, clock)).rejects.toBe(err);
      expect(n).toBe(1);
      expect(clock.slept).toEqual([]);
    }
  });

  it('shows one notice for several waiting requests, until the last is answered', async () => {
    const seen: boolean[] = [];
    const stop = onSwitching((w) => seen.push(w));
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const slow: Clock = { now: () => 0, sleep: () => gate };
    const a = retrying(async (n) => (n === 1 ? Promise.reject(noLeader()) : 'a'), slow);
    const b = retrying(async (n) => (n === 1 ? Promise.reject(noLeader()) : 'b'), slow);
    await vi.waitFor(() => expect(isWaiting()).toBe(true));
    release();
    expect(await Promise.all([a, b])).toEqual(['a', 'b']);
    stop();
    expect(seen).toEqual([true, false]);
  });
});

/** A JSON answer as fetch gives it. */
const answer = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

describe('the API client over a switch of managers', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('creates one session: the same Idempotency-Key on every attempt of a create', async () => {
    const keys: (string | undefined)[] = [];
    let calls = 0;
    vi.stubGlobal('fetch', async (_url: string, init: RequestInit) => {
      calls += 1;
      keys.push((init.headers as Record<string, string>)['Idempotency-Key']);
      if (calls <= 2) return answer(503, { type: `${PROBS}no-leader`, title: 'No manager leads the cluster now.', msg: 'try again' });
      return answer(201, { sessionId: 's1', sessionName: 'web1', status: 'PENDING' });
    });
    const p = api('POST', '/session', { body: { image: 'python', sessionName: 'web1' } as never });
    await vi.advanceTimersByTimeAsync(2_000);
    const r = await p;
    expect(r.sessionId).toBe('s1');
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(/^web-/);
    expect(new Set(keys).size).toBe(1);
    // A new create is a new request: a new key.
    calls = 0;
    const q = api('POST', '/session', { body: { image: 'python', sessionName: 'web2' } as never });
    await vi.advanceTimersByTimeAsync(2_000);
    await q;
    expect(keys[3]).toMatch(/^web-/);
    expect(keys[3]).not.toBe(keys[0]);
  });

  it('sends no key with other requests, and retries them too (GraphQL through database-unavailable)', async () => {
    const keys: (string | undefined)[] = [];
    let calls = 0;
    vi.stubGlobal('fetch', async (_url: string, init: RequestInit) => {
      calls += 1;
      keys.push((init.headers as Record<string, string>)['Idempotency-Key']);
      return calls === 1 ? answer(503, { type: `${PROBS}database-unavailable`, title: 'The database cannot be reached.' }) : answer(200, { data: { x: 1 } });
    });
    const p = gql<{ x: number }>('query { x }');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await p).toEqual({ x: 1 });
    expect(keys).toEqual([undefined, undefined]);
  });

  it('gives up after 30 s with the server\'s own words', async () => {
    let calls = 0;
    vi.stubGlobal('fetch', async () => {
      calls += 1;
      return answer(503, { type: `${PROBS}no-leader`, title: 'No manager leads the cluster now.', msg: 'one is taking over; try again in a few seconds' });
    });
    const p = api('GET', '/folders').catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(RETRY_WINDOW_MS + 5_000);
    const e = (await p) as ApiError;
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(503);
    expect(e.message).toContain('try again in a few seconds');
    expect(calls).toBeGreaterThan(5);
    expect(isWaiting()).toBe(false);
  });

  it('bounds every request: one that never answers is given up with a clear error', async () => {
    let signal: AbortSignal | undefined;
    vi.stubGlobal('fetch', (_url: string, init: RequestInit) => {
      signal = init.signal ?? undefined;
      return new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
    });
    const p = api('GET', '/folders').catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS - 1);
    expect(signal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const e = (await p) as ApiError;
    expect(signal?.aborted).toBe(true);
    expect(e).toBeInstanceOf(ApiError);
    expect(e.type).toBe('timeout');
    expect(e.message).toBe('The server did not answer within 60 s (GET /folders).');
  });
});
