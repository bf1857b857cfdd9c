// The browser's API client: the session cookie authenticates (the browser never holds a
// secret key); every request carries X-BAI-Web, which state-changing ones must have.

export class ApiError extends Error {
  constructor(public status: number, public title: string, message: string) {
    super(message);
  }
}

export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { 'X-BAI-Web': '1', Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let data: any = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!r.ok) {
    const msg = (data && (data.msg || data.data?.details || data.title)) || `${r.status} ${r.statusText}`;
    throw new ApiError(r.status, (data && data.title) || 'Error', msg);
  }
  return data as T;
}

export async function gql<T = any>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const r = await api<{ data: T; errors?: { message: string }[] }>('POST', '/admin/gql', { query, variables });
  if (r.errors && r.errors.length) throw new ApiError(400, 'GraphQL error', r.errors[0].message);
  return r.data;
}

export interface Me {
  email: string;
  access_key: string;
  is_admin: boolean;
  role: string;
}

export interface SessionItem {
  id: string;
  name: string;
  type: string;
  status: string;
  status_info: string | null;
  image: string;
  created_at: string;
  terminated_at: string | null;
  occupying_slots: string;
  agent: string | null;
  user_email: string | null;
}

export const RUNNING_STATES = ['PENDING', 'SCHEDULED', 'PREPARING', 'PULLING', 'PREPARED', 'CREATING', 'RUNNING', 'RESTARTING', 'TERMINATING'];
export const FINISHED_STATES = ['TERMINATED', 'CANCELLED', 'ERROR'];

export async function listSessions(statuses: string[]): Promise<SessionItem[]> {
  const q = `query($limit:Int!, $offset:Int!, $status:String) {
    compute_session_list(limit:$limit, offset:$offset, status:$status) {
      items { id name type status status_info image created_at terminated_at occupying_slots agent user_email }
      total_count
    }
  }`;
  const d = await gql<{ compute_session_list: { items: SessionItem[] } }>(q, {
    limit: 200,
    offset: 0,
    status: statuses.join(','),
  });
  return d.compute_session_list.items;
}

export function formatSlots(json: string): string {
  try {
    const s = JSON.parse(json || '{}');
    const parts: string[] = [];
    if (s.cpu) parts.push(`${s.cpu} CPU`);
    if (s.mem) parts.push(`${(Number(s.mem) / 2 ** 30).toFixed(Number(s.mem) % 2 ** 30 ? 2 : 0)} GiB`);
    for (const [k, v] of Object.entries(s)) if (k !== 'cpu' && k !== 'mem' && Number(v)) parts.push(`${v} ${k}`);
    return parts.join(', ') || '-';
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
