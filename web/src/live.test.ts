import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LIFECYCLE_EVENTS, followSessions } from './live';
import { FakeStream } from './fakeStream';

describe('following the session event stream', () => {
  it("listens to the server's session events, taken from its schema", () => {
    expect(LIFECYCLE_EVENTS).toContain('session_enqueued');
    expect(LIFECYCLE_EVENTS).toContain('session_terminated');
    // A preemption refreshes the list too (the victim's status and its warning).
    expect(LIFECYCLE_EVENTS).toContain('session_preempted');
    expect(LIFECYCLE_EVENTS).toHaveLength(10);
    expect(LIFECYCLE_EVENTS.every((n) => n.startsWith('session_'))).toBe(true);
  });

  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('refreshes the view shown now, also after it changed (a tab switch keeps the stream)', () => {
    const es = new FakeStream();
    const running = vi.fn();
    const finished = vi.fn();
    let current = running;
    followSessions(es, { refresh: () => current });
    es.open();
    expect(running).toHaveBeenCalledTimes(1);
    current = finished; // the user opens Finished; the stream stays
    es.emit('session_terminated', { sessionId: 's1', sessionName: 'web' });
    vi.advanceTimersByTime(200);
    expect(finished).toHaveBeenCalledTimes(1);
    expect(running).toHaveBeenCalledTimes(1);
    expect(es.closed).toBe(false);
  });

  it('refreshes once per burst of events and once per reconnection', () => {
    const es = new FakeStream();
    const refresh = vi.fn();
    followSessions(es, { refresh: () => refresh, debounceMs: 150 });
    es.emit('session_terminating', { sessionId: 's1' });
    vi.advanceTimersByTime(100);
    es.emit('session_terminated', { sessionId: 's1' });
    vi.advanceTimersByTime(100);
    expect(refresh).not.toHaveBeenCalled();
    vi.advanceTimersByTime(100);
    expect(refresh).toHaveBeenCalledTimes(1);
    es.open(); // the browser reconnected after a drop
    expect(refresh).toHaveBeenCalledTimes(2);
  });

  it('hands parsed events over, skips malformed data, and stops cleanly', () => {
    const es = new FakeStream();
    const refresh = vi.fn();
    const seen: [string, unknown][] = [];
    const stop = followSessions(es, { refresh: () => refresh, onEvent: (t, d) => seen.push([t, d.sessionName]) });
    es.emit('session_started', { sessionId: 's1', sessionName: 'web' });
    es.emit('session_started', 'not json');
    es.emit('kernel_started', { sessionName: 'ignored' });
    expect(seen).toEqual([['session_started', 'web']]);
    stop();
    vi.advanceTimersByTime(1000);
    expect(refresh).not.toHaveBeenCalled();
    expect(es.closed).toBe(true);
    expect(es.onopen).toBeNull();
  });
});
