// The browser's API client: the session cookie authenticates (the browser never holds a
// secret key); every request carries X-BAI-Web, which state-changing ones must have, and has
// a bounded time; a switch of managers is waited through (retry.ts).

import type { components, paths } from './api-types';
import { formatAccel, isAccelSlot } from './accel';
import { isSessionCreate, newIdempotencyKey, retrying, timeoutFor } from './retry';

export class ApiError extends Error {
  /** `type` is the JSON problem's (`…/session-busy`), when the answer was one. */
  constructor(public status: number, public title: string, message: string, public type?: string) {
    super(message);
  }
}

/** A type of the server's wire contract, by its name in docs/openapi.json. */
export type Schema<N extends keyof components['schemas']> = components['schemas'][N];

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/** The documented paths that have an operation for `M`. */
export type PathOf<M extends Method> = {
  [P in keyof paths]: paths[P] extends Record<Lowercase<M>, object> ? P : never;
}[keyof paths];

type Operation<M extends Method, P extends PathOf<M>> = paths[P][Lowercase<M>];

type JsonContent<C> = C extends { content: { 'application/json': infer T } } ? T : null;
type SuccessCode = 200 | 201 | 202 | 204;

/** What a successful call answers: its JSON body, or `null` for an empty one (204). */
export type Reply<M extends Method, P extends PathOf<M>> =
  Operation<M, P> extends { responses: infer R } ? { [C in keyof R & SuccessCode]: JsonContent<R[C]> }[keyof R & SuccessCode] : never;

type PathPart<O> = O extends { parameters: { path: infer X } } ? { path: X } : { path?: undefined };
type QueryPart<O> = O extends { parameters: { query: infer Q } }
  ? { query: Q }
  : O extends { parameters: { query?: infer Q } }
    ? { query?: Q }
    : { query?: undefined };
type BodyPart<O> = O extends { requestBody: { content: { 'application/json': infer B } } }
  ? { body: B }
  : O extends { requestBody?: { content: { 'application/json': infer B } } }
    ? { body?: B }
    : { body?: undefined };

/** The path parameters, query and JSON body an operation takes, as the document says. */
export type Request<M extends Method, P extends PathOf<M>> = PathPart<Operation<M, P>> & QueryPart<Operation<M, P>> & BodyPart<Operation<M, P>>;

// (Through `QueryPart`, not `Request<M, P>['query']`: that indexed access over the generic
// request multiplies its three parts for every path, past the compiler's union limit.)
/** The query parameters an operation takes. */
export type Query<M extends Method, P extends PathOf<M>> = QueryPart<Operation<M, P>> extends { query?: infer Q } ? NonNullable<Q> : never;

/** `/folders/{id}/files` with `{id: 'abc'}` and `{path: ''}` → `/folders/abc/files?path=`. */
export function buildUrl(template: string, path?: Record<string, string | number>, query?: Record<string, string | number | boolean | undefined>): string {
  const url = template.replace(/\{([^}]+)\}/g, (_, k: string) => {
    const v = path?.[k];
    if (v === undefined) throw new Error(`${template}: no value for {${k}}`);
    return encodeURIComponent(String(v));
  });
  const q = Object.entries(query ?? {})
    .filter((e): e is [string, string | number | boolean] => e[1] !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  return q ? `${url}?${q}` : url;
}

/** What `api` is given beside the method and path: nothing where the operation takes nothing. */
export type RequestArgs<M extends Method, P extends PathOf<M>> = {} extends Request<M, P> ? [req?: Request<M, P>] : [req: Request<M, P>];

type RawRequest = { path?: Record<string, string | number>; query?: Record<string, string | number | boolean | undefined>; body?: unknown };

/** Calls a documented operation: `path` is the document's template (`/session/{reference}`),
 *  and what it takes and answers are the contract's types. */
//
// One signature per method: with the method fixed, checking a call stays small (a signature
// generic in the method too makes the compiler build the union of every operation's request
// while it infers, past its limit of 100,000 members: TS2590).
export function api<P extends PathOf<'GET'>>(method: 'GET', path: P, ...req: RequestArgs<'GET', P>): Promise<Reply<'GET', P>>;
export function api<P extends PathOf<'POST'>>(method: 'POST', path: P, ...req: RequestArgs<'POST', P>): Promise<Reply<'POST', P>>;
export function api<P extends PathOf<'PUT'>>(method: 'PUT', path: P, ...req: RequestArgs<'PUT', P>): Promise<Reply<'PUT', P>>;
export function api<P extends PathOf<'DELETE'>>(method: 'DELETE', path: P, ...req: RequestArgs<'DELETE', P>): Promise<Reply<'DELETE', P>>;
export function api<P extends PathOf<'PATCH'>>(method: 'PATCH', path: P, ...req: RequestArgs<'PATCH', P>): Promise<Reply<'PATCH', P>>;
// The answer is what the document says the operation answers (the signature above).
export function api(method: Method, path: string, req?: object): Promise<unknown> {
  const r: RawRequest = req ?? {};
  return send(method, buildUrl(path, r.path, r.query), r.body);
}

/** The message and title of an error answer: a JSON problem's `msg` and `title`, or the
 *  `data.details` of a refused login (Backend.AI's login answer, which is no problem
 *  document); anything else gives none. */
export function problem(data: unknown): { msg?: string; title?: string } {
  if (!data || typeof data !== 'object') return {};
  const p = data as { msg?: unknown; title?: unknown; data?: unknown };
  const details = p.data && typeof p.data === 'object' ? (p.data as { details?: unknown }).details : undefined;
  const msg = typeof p.msg === 'string' ? p.msg : typeof details === 'string' ? details : undefined;
  return { msg, title: typeof p.title === 'string' ? p.title : undefined };
}

/** One request; the parsed JSON answer (`null` when empty), or an `ApiError`. A `503` of a
 *  switch of managers is tried again for up to 30 s (retry.ts), a session create with the same
 *  `Idempotency-Key` each time, so that it makes one session however often it is sent. */
async function send(method: Method, url: string, body?: unknown): Promise<unknown> {
  const headers: Record<string, string> = { 'X-BAI-Web': '1', Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (isSessionCreate(method, url)) headers['Idempotency-Key'] = newIdempotencyKey();
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return retrying(() => attempt(method, url, headers, payload));
}

/** One attempt, given up (an `ApiError` of type `timeout`) after `timeoutFor` it. */
async function attempt(method: Method, url: string, headers: Record<string, string>, body: string | undefined): Promise<unknown> {
  const abort = new AbortController();
  const limit = timeoutFor(method, url);
  const timer = setTimeout(() => abort.abort(), limit);
  let r: Response;
  let text: string;
  try {
    r = await fetch(url, { method, headers, credentials: 'same-origin', body, signal: abort.signal });
    text = await r.text();
  } catch (e) {
    if (abort.signal.aborted) {
      throw new ApiError(0, 'No answer', `The server did not answer within ${limit / 1000} s (${method} ${url.split('?')[0]}).`, 'timeout');
    }
    throw e;
  } finally {
    clearTimeout(timer);
  }
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!r.ok) {
    const p = problem(data);
    const type = data && typeof data === 'object' && typeof (data as { type?: unknown }).type === 'string' ? (data as { type: string }).type : undefined;
    throw new ApiError(r.status, p.title || 'Error', p.msg || p.title || `${r.status} ${r.statusText}`, type);
  }
  return data;
}

/** A GraphQL query; `T` is the shape of `data` the query selects (the document says only
 *  "free JSON"). */
export async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const r = await api('POST', '/admin/gql', { body: { query, variables } });
  if (r.errors && r.errors.length) throw new ApiError(400, 'GraphQL error', r.errors[0].message);
  return r.data as T;
}

export type Me = Schema<'Me'>;

/** A row of the session list: `compute_session_list` answers the fields of `GET /session/{reference}`. */
export type SessionItem = Pick<
  Schema<'SessionInfo'>,
  'id' | 'name' | 'type' | 'status' | 'status_info' | 'image' | 'created_at' | 'terminated_at' | 'occupying_slots' | 'requested_slots' | 'agent' | 'user_email'
>;

export const RUNNING_STATES = ['PENDING', 'SCHEDULED', 'PREPARING', 'PULLING', 'PREPARED', 'CREATING', 'RUNNING', 'RESTARTING', 'RUNNING_DEGRADED', 'PREEMPTED', 'TERMINATING'];
export const FINISHED_STATES = ['TERMINATED', 'CANCELLED', 'ERROR'];

/** The sessions in `statuses`: the user's own, or (`system`) the platform's system sessions
 *  made for them (SFTP), which the server lists only when asked for. */
export async function listSessions(statuses: string[], system = false): Promise<SessionItem[]> {
  const q = `query($limit:Int!, $offset:Int!, $status:String, $type:String) {
    compute_session_list(limit:$limit, offset:$offset, status:$status, type:$type) {
      items { id name type status status_info image created_at terminated_at occupying_slots requested_slots agent user_email }
      total_count
    }
  }`;
  const d = await gql<{ compute_session_list: { items: SessionItem[] } }>(q, {
    limit: 200,
    offset: 0,
    status: statuses.join(','),
    type: system ? 'system' : null,
  });
  return d.compute_session_list.items;
}

/** A slot map in words: `2 CPU, 4 GiB, 0.50 fGPU` (accelerators in their units). */
export function formatSlotMap(s: Record<string, unknown>): string {
  const parts: string[] = [];
  if (s.cpu) parts.push(`${s.cpu} CPU`);
  if (s.mem) parts.push(`${(Number(s.mem) / 2 ** 30).toFixed(Number(s.mem) % 2 ** 30 ? 2 : 0)} GiB`);
  for (const [k, v] of Object.entries(s)) if (isAccelSlot(k) && Number(v)) parts.push(formatAccel(String(v), k));
  return parts.join(', ') || '-';
}

/** A slot map given as JSON text (the session list's `occupying_slots`), in words. */
export function formatSlots(json: string): string {
  try {
    const s: unknown = JSON.parse(json || '{}');
    return s && typeof s === 'object' ? formatSlotMap(s as Record<string, unknown>) : '-';
  } catch {
    return '-';
  }
}

export function elapsed(from: string, to?: string | null): string {
  const ms = (to ? Date.parse(to) : Date.now()) - Date.parse(from);
  if (!(ms >= 0)) return '-';
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h}h ${m}m` : m ? `${m}m ${s % 60}s` : `${s}s`;
}

/** A server time in the browser's locale; `-` when there is none. */
export function formatTime(t?: string | null): string {
  return t ? new Date(t).toLocaleString() : '-';
}

/** `512 B`, `1.5 KiB`, `2.0 GiB`. */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return i === 0 ? `${Math.round(v)} B` : `${v.toFixed(1)} ${units[i]}`;
}
