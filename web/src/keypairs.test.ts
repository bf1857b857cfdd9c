import { describe, expect, it } from 'vitest';
import { endpointOf, envLines, revokeBlocked } from './keypairs';

describe('keypairs', () => {
  it('writes the environment for bai and backend.ai', () => {
    const text = envLines('AKX', 'SKY', endpointOf({ origin: 'https://bai.example.org' }));
    expect(text.split('\n')).toEqual([
      'export BACKEND_ENDPOINT=https://bai.example.org',
      'export BACKEND_ENDPOINT_TYPE=api',
      'export BACKEND_ACCESS_KEY=AKX',
      'export BACKEND_SECRET_KEY=SKY',
    ]);
  });

  it('keeps the login keypair and the last active one', () => {
    const login = { access_key: 'A', is_active: true, login: true };
    const cli = { access_key: 'B', is_active: true, login: false };
    const old = { access_key: 'C', is_active: false, login: false };
    expect(revokeBlocked(login, [login, cli])).toMatch(/web login/);
    expect(revokeBlocked(cli, [login, cli])).toBeNull();
    expect(revokeBlocked(old, [login, cli, old])).toMatch(/revoked/);
    expect(revokeBlocked(cli, [cli, old])).toMatch(/only active/);
  });
});
