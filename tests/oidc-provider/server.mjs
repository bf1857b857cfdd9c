// A real OpenID provider for bai's OIDC login tests (tests/tests/oidc.rs): the certified
// `oidc-provider` package with its built-in development interactions (a login form that takes
// any password, then a consent form). Not for production.
//
//   node server.mjs CONFIG.json
//
// CONFIG: {"port": 9000, "kid": "k1", "clients": [{client_id, client_secret, redirect_uris,
//          backchannel_logout_uri, …}],
//          "users": "users.json"}. users.json maps a login name to its claims
// ({"ada": {"email": …, "name": …, "groups": […]}}); it is read at every token, so a test
// changes someone's groups by rewriting it. A new signing key (RS256, kid CONFIG.kid) is made
// at every start: a restart with another kid is a key rotation.
import { readFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const issuer = `http://127.0.0.1:${config.port}`;
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: config.kid || 'k1', alg: 'RS256', use: 'sig' };

const users = () => JSON.parse(readFileSync(config.users, 'utf8'));

const provider = new Provider(issuer, {
  clients: config.clients.map((c) => ({
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
    post_logout_redirect_uris: c.post_logout_redirect_uris || [],
    ...c,
  })),
  jwks: { keys: [jwk] },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'preferred_username', 'groups'],
  },
  // The scopes' claims in the ID token itself (bai reads the ID token, not userinfo).
  conformIdTokenClaims: false,
  // Back-Channel Logout 1.0: at its logout page (end_session), the provider POSTs a logout
  // token to every client of the session that has a backchannel_logout_uri.
  features: {
    devInteractions: { enabled: true },
    backchannelLogout: { enabled: true },
    rpInitiatedLogout: { enabled: true },
  },
  // The package refuses to send requests to special-use addresses (an SSRF guard); bai
  // listens on a loopback address in these tests, so its back-channel logout URI is one.
  fetch: (url, options) => {
    delete options.dispatcher;
    return globalThis.fetch(url, options);
  },
  pkce: { required: () => true },
  async findAccount(_ctx, id) {
    const u = users()[id];
    if (!u) return undefined;
    return {
      accountId: id,
      async claims() {
        return { sub: id, preferred_username: id, email_verified: true, ...users()[id] };
      },
    };
  },
});
provider.proxy = false;
// Errors of the flow are the test's to see (the rendered page says them too).
provider.on('server_error', (_ctx, err) => console.error('server_error', err));

provider.listen(config.port, '127.0.0.1', () => {
  console.log(`oidc-provider listening on ${issuer}`);
});
