import { describe, expect, it, vi } from 'vitest';
import { followTask, percent, taskStreamUrl } from './bgtask';
import { FakeStream } from './fakeStream';

const ev = (message: string, current = 0, total = 2) => ({ task_id: 't1', message, current_progress: current, total_progress: total });

describe('following a background task', () => {
  it('reports progress, then the outcome once, and closes the stream', () => {
    const es = new FakeStream();
    const onProgress = vi.fn();
    const onEnd = vi.fn();
    followTask(es, { onProgress, onEnd });
    es.emit('bgtask_updated', ev('committing session s1', 0));
    es.emit('bgtask_updated', ev('recording image webimg1', 1));
    expect(onProgress).toHaveBeenLastCalledWith({ current: 1, total: 2, message: 'recording image webimg1' });
    es.emit('bgtask_done', ev('1b4e28ba-2fa1-11d2-883f-0016d3cca427', 2));
    es.emit('server_close', {});
    expect(onEnd).toHaveBeenCalledTimes(1);
    expect(onEnd).toHaveBeenCalledWith('done', '1b4e28ba-2fa1-11d2-883f-0016d3cca427');
    expect(es.closed).toBe(true);
    // Nothing after the end.
    es.emit('bgtask_updated', ev('late'));
    expect(onProgress).toHaveBeenCalledTimes(2);
  });

  it('reports a failure and a cancellation with their messages', () => {
    for (const [type, outcome] of [['bgtask_failed', 'failed'], ['bgtask_cancelled', 'cancelled']] as const) {
      const es = new FakeStream();
      const onEnd = vi.fn();
      followTask(es, { onProgress: () => undefined, onEnd });
      es.emit(type, ev('the engine said no'));
      expect(onEnd).toHaveBeenCalledWith(outcome, 'the engine said no');
    }
  });

  it('says the task is lost when the stream ends without an outcome or is refused', () => {
    const closed = new FakeStream();
    const onEnd = vi.fn();
    followTask(closed, { onProgress: () => undefined, onEnd });
    closed.emit('server_close', {});
    expect(onEnd).toHaveBeenCalledWith('lost', expect.stringContaining('closed'));

    const refused = new FakeStream();
    const onEnd2 = vi.fn();
    followTask(refused, { onProgress: () => undefined, onEnd: onEnd2 });
    // A dropped connection is retried by the EventSource: not the end.
    refused.onerror?.(new Event('error'));
    expect(onEnd2).not.toHaveBeenCalled();
    refused.readyState = 2;
    refused.onerror?.(new Event('error'));
    expect(onEnd2).toHaveBeenCalledWith('lost', expect.stringContaining('refused'));
  });

  it('stops following when asked', () => {
    const es = new FakeStream();
    const onEnd = vi.fn();
    const stop = followTask(es, { onProgress: () => undefined, onEnd });
    stop();
    expect(es.closed).toBe(true);
    es.emit('bgtask_done', ev('x'));
    expect(onEnd).not.toHaveBeenCalled();
  });

  it('computes the percentage and the stream URL', () => {
    expect(percent({ current: 1, total: 2, message: '' })).toBe(50);
    expect(percent({ current: 0, total: 0, message: '' })).toBeNull();
    expect(percent({ current: 5, total: 2, message: '' })).toBe(100);
    expect(taskStreamUrl('a b')).toBe('/events/background-task?task_id=a%20b');
  });
});
