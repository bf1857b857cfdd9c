// Settings → My keypair in a real browser (Debian's chromium, playwright-core): log in, open
// Settings, make a new keypair (its secret shown once) and check it with `bai ps`, give it a
// new secret (the old one refused, the new one works), revoke it in the page (then `bai`
// fails with one line), and see why the web login's keypair — the last one — cannot be
// revoked, beside its button.
//   BAI_URL                 bai (its web UI built)
//   BAI_USER, BAI_PASSWORD  who logs in (a directory name works as well as an email)
//   BAI_EMAIL               the email bai shows once logged in
//   BAI_BIN                 the `bai` command line client
//   CHROMIUM, SCREENSHOTS   as in run.mjs
// Prints one line per step and "keypair: N passed" at the end; exits non-zero on the first
// failure.
import { open } from './browser.mjs';
import { spawnSync } from 'node:child_process';

const { BAI_URL: url, BAI_USER: user, BAI_PASSWORD: password, BAI_EMAIL: email, BAI_BIN: bai } = process.env;
if (!url || !user || !password || !email || !bai) {
  console.error('set BAI_URL, BAI_USER, BAI_PASSWORD, BAI_EMAIL and BAI_BIN');
  process.exit(2);
}
const shots = process.env.SCREENSHOTS;

const { page, step, done } = await open('keypair', { width: 1400, height: 900 });
const byTest = (id) => page.getByTestId(id);

/** `bai ps` with a keypair: its exit status and stderr. */
function baiPs(ak, sk) {
  const env = { ...process.env, BACKEND_ENDPOINT: url, BACKEND_ENDPOINT_TYPE: 'api', BACKEND_ACCESS_KEY: ak, BACKEND_SECRET_KEY: sk };
  const r = spawnSync(bai, ['ps'], { env, encoding: 'utf8', timeout: 60000 });
  return { ok: r.status === 0, stderr: (r.stderr || '').trim(), stdout: r.stdout || '' };
}
function expectWorks(ak, sk) {
  const r = baiPs(ak, sk);
  if (!r.ok) throw new Error(`bai ps failed with ${ak}: ${r.stderr}`);
}
/** `bai ps` must fail with one line, `error: …`. */
function expectRefused(ak, sk) {
  const r = baiPs(ak, sk);
  if (r.ok) throw new Error(`bai ps still works with ${ak}`);
  const lines = r.stderr.split('\n').filter((l) => l.trim());
  if (lines.length !== 1 || !lines[0].startsWith('error: ')) throw new Error(`bai's error is not one line: ${JSON.stringify(r.stderr)}`);
  return lines[0];
}
/** The access and secret key the once-shown secret's lines set. */
async function shownSecret() {
  const text = await byTest('keypair-env').innerText();
  const ak = /BACKEND_ACCESS_KEY=(\S+)/.exec(text)?.[1];
  const sk = /BACKEND_SECRET_KEY=(\S+)/.exec(text)?.[1];
  if (!ak || !sk) throw new Error(`the lines shown: ${JSON.stringify(text)}`);
  if (!text.includes(`BACKEND_ENDPOINT=${url.replace(/\/+$/, '')}`)) throw new Error(`no endpoint in ${JSON.stringify(text)}`);
  return { ak, sk };
}
async function closeSecret() {
  await page.locator('.ant-modal-wrap:visible').getByRole('button', { name: 'Done' }).click();
  await byTest('keypair-env').waitFor({ state: 'detached' });
}
/** The row of an access key in the table. */
const row = (ak) => page.locator('tr', { has: byTest(`keypair-row-${ak}`) });

let loginKey = null;
let made = null;

await step('log in', async () => {
  await page.goto(url);
  await byTest('login-email').fill(user);
  await byTest('login-password').fill(password);
  await byTest('login-submit').click();
  await byTest('whoami').filter({ hasText: email }).first().waitFor();
});

await step('Settings shows my keypair, the web login\'s', async () => {
  await page.getByRole('menuitem', { name: 'Settings' }).click();
  await byTest('settings-keypair').waitFor();
  const rows = page.locator('[data-testid^="keypair-row-"]');
  await rows.first().waitFor();
  if ((await rows.count()) !== 1) throw new Error(`${await rows.count()} keypairs listed`);
  loginKey = (await rows.first().getAttribute('data-testid')).replace('keypair-row-', '');
  await row(loginKey).filter({ hasText: 'web login' }).waitFor();
  await row(loginKey).filter({ hasText: 'active' }).waitFor();
});

await step('a new keypair: its secret shown once, and `bai ps` works with it', async () => {
  await byTest('keypair-new').click();
  made = await shownSecret();
  if (made.ak === loginKey) throw new Error('the new keypair is the login one');
  await closeSecret();
  await row(made.ak).waitFor();
  expectWorks(made.ak, made.sk);
  if (shots) await page.screenshot({ path: `${shots}/keypair.png` });
});

await step('a new secret for it: the old one is refused, the new one works', async () => {
  await byTest(`keypair-secret-${made.ak}`).click();
  await page.locator('.ant-popover:visible').getByTestId('keypair-secret-ok').click();
  const again = await shownSecret();
  await closeSecret();
  if (again.ak !== made.ak || again.sk === made.sk) throw new Error('not a new secret for the same access key');
  expectRefused(made.ak, made.sk);
  expectWorks(again.ak, again.sk);
  made = again;
});

await step('revoked in the page: `bai` fails with one line', async () => {
  await byTest(`keypair-revoke-${made.ak}`).click();
  await page.locator('.ant-popover:visible').getByTestId('keypair-revoke-ok').click();
  await row(made.ak).filter({ hasText: 'revoked' }).waitFor();
  const line = expectRefused(made.ak, made.sk);
  if (line.includes(made.sk)) throw new Error('the secret is in the error');
  if (!(await byTest(`keypair-secret-${made.ak}`).isDisabled())) throw new Error('a revoked keypair offers a new secret');
});

await step('the last keypair, the web login\'s, cannot be revoked: why, beside its button', async () => {
  const revoke = byTest(`keypair-revoke-${loginKey}`);
  if (!(await revoke.isDisabled())) throw new Error('the web login\'s keypair may be revoked');
  await revoke.locator('xpath=..').hover();
  await page.locator('.ant-tooltip:visible').filter({ hasText: 'Your web login uses this keypair' }).waitFor();
  // The server says no as well (the page only spares the user the round trip).
  const r = await page.request.post(new URL(`/user/keypairs/${loginKey}/revoke`, url).toString(), { headers: { 'X-BAI-Web': '1' } });
  if (r.status() !== 409) throw new Error(`the server answered ${r.status()}`);
  const body = await r.json();
  if (!String(body.msg).includes('lock you out')) throw new Error(`the server's words: ${JSON.stringify(body)}`);
  await row(loginKey).filter({ hasText: 'active' }).waitFor();
});

await done();
