// The user's own keypairs (Settings → My keypair): the lines that set up `bai` and the
// official client, and what the page may offer for each keypair.

export interface KeypairRow {
  access_key: string;
  is_active: boolean;
  login: boolean;
}

/** The API endpoint of this web UI's server: its origin (the UI and the API share it). */
export function endpointOf(loc: { origin: string }): string {
  return loc.origin.replace(/\/+$/, '');
}

/** The shell lines for `bai` and `backend.ai` (what `baid` writes into env-*.sh). */
export function envLines(accessKey: string, secretKey: string, endpoint: string): string {
  return [
    `export BACKEND_ENDPOINT=${endpoint}`,
    'export BACKEND_ENDPOINT_TYPE=api',
    `export BACKEND_ACCESS_KEY=${accessKey}`,
    `export BACKEND_SECRET_KEY=${secretKey}`,
  ].join('\n');
}

/** Why a keypair cannot be revoked here (null: it can). The server enforces the same. */
export function revokeBlocked(k: KeypairRow, all: KeypairRow[]): string | null {
  if (!k.is_active) return 'Already revoked.';
  if (k.login) return 'Your web login uses this keypair: make a new secret instead.';
  if (!all.some((o) => o.is_active && o.access_key !== k.access_key)) return 'Your only active keypair.';
  return null;
}
