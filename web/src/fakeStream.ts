// For tests only: a server-sent event stream (EventSource's shape) driven by the test. It
// satisfies both the session stream (`live.ts`) and a background task's stream (`bgtask.ts`).

export class FakeStream {
  onopen: ((ev: Event) => unknown) | null = null;
  onerror: ((ev: Event) => unknown) | null = null;
  readyState = 1;
  closed = false;
  private listeners = new Map<string, ((ev: MessageEvent) => void)[]>();
  addEventListener(type: string, listener: (ev: MessageEvent) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  close() {
    this.closed = true;
    this.readyState = 2;
  }
  open() {
    this.onopen?.(new Event('open'));
  }
  emit(type: string, data: unknown) {
    const ev = new MessageEvent(type, { data: typeof data === 'string' ? data : JSON.stringify(data) });
    for (const l of this.listeners.get(type) ?? []) l(ev);
  }
}
