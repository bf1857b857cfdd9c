// Egress policies (a resource group's, a session's): one line for listings and the allow
// list as an admin types it. The server checks every destination again and names a bad one.
import { Schema } from './api';

export type EgressPolicy = Schema<'EgressPolicy'>;
export type EgressMode = Schema<'EgressMode'>;

/** What each policy closes, in words (the `open` one stated as the risk it is). */
export const EGRESS_HELP: Record<EgressMode, string> = {
  default: 'Kernels cannot reach their host, link-local and metadata addresses or the cluster’s nodes; the rest works.',
  closed: 'Kernels reach only their own cluster peers and the allowed destinations.',
  open: 'Nothing is closed: kernels reach their host’s control ports, the cluster’s nodes and the cloud’s metadata service (instance credentials).',
};

/** `default`, `closed allow 10.0.0.0/8,10.1.2.3:3128` (as the CLI prints it). */
export function egressSummary(p: EgressPolicy | null | undefined): string {
  if (!p) return '-';
  const allow = p.allow ?? [];
  return allow.length ? `${p.mode} allow ${allow.join(',')}` : p.mode;
}

/** The allow list as typed (commas, spaces or new lines between destinations). */
export function allowList(text: string): string[] {
  return text.split(/[\s,]+/).filter((w) => w !== '');
}

/** A destination's shape, checked before sending: `CIDR`, `ADDRESS`, with `:PORT`, v6 in `[...]` with a port. */
export function destinationProblem(d: string): string | null {
  const v4 = /^(\d{1,3}\.){3}\d{1,3}(\/\d{1,2})?(:\d{1,5})?$/;
  const v6 = /^[0-9a-fA-F:]+(\/\d{1,3})?$|^\[[0-9a-fA-F:]+(\/\d{1,3})?\](:\d{1,5})?$/;
  if (v4.test(d) || (d.includes(':') && v6.test(d))) return null;
  // The server's own reason for a port range (bai-core egress.rs), not the generic one.
  if (/:\d{1,5}-\d{1,5}$/.test(d)) return `"${d}": port ranges are not supported; list each port as a destination of its own`;
  return `"${d}" is not an address or block (10.0.0.0/8, 10.1.2.3:3128, [fd00::1]:443)`;
}
