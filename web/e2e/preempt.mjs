// The owner of a preempted session is told at once, in a real browser (Debian's chromium,
// playwright-core): logged in on the Sessions page while their low-priority batch session
// runs, another user's urgent session (started here with `bai`) preempts it; a warning
// notification names the session and why, and the header's Notifications list keeps it.
//   BAI_URL                 bai (its web UI built)
//   BAI_USER, BAI_PASSWORD  the victim's owner, who logs in
//   BAI_EMAIL               the email bai shows once logged in
//   BAI_VICTIM              the owner's running session that will be preempted
//   BAI_BIN                 the `bai` command line client
//   URGENT_ACCESS_KEY, URGENT_SECRET_KEY  the keypair that starts the urgent session
//   URGENT_ARGS             `bai start` arguments of the urgent session (space-separated)
//   CHROMIUM, SCREENSHOTS   as in run.mjs
// Prints one line per step and "preempt: N passed" at the end; exits non-zero on the first
// failure.
import { open } from './browser.mjs';
import { spawnSync } from 'node:child_process';

const env = process.env;
const { BAI_URL: url, BAI_USER: user, BAI_PASSWORD: password, BAI_EMAIL: email, BAI_BIN: bai, BAI_VICTIM: victim } = env;
if (!url || !user || !password || !email || !bai || !victim || !env.URGENT_ACCESS_KEY || !env.URGENT_ARGS) {
  console.error('set BAI_URL, BAI_USER, BAI_PASSWORD, BAI_EMAIL, BAI_BIN, BAI_VICTIM, URGENT_ACCESS_KEY, URGENT_SECRET_KEY and URGENT_ARGS');
  process.exit(2);
}

const { page, step, done } = await open('preempt', { timeout: 60000 });
const byTest = (id) => page.getByTestId(id);

await step('log in and see the running session', async () => {
  await page.goto(url);
  await byTest('login-email').fill(user);
  await byTest('login-password').fill(password);
  await byTest('login-submit').click();
  await byTest('whoami').filter({ hasText: email }).first().waitFor();
  await page.getByText(victim, { exact: true }).first().waitFor();
});

await step('another user starts an urgent session', async () => {
  const r = spawnSync(bai, ['start', ...env.URGENT_ARGS.split(' ')], {
    env: { ...env, BACKEND_ENDPOINT: url, BACKEND_ENDPOINT_TYPE: 'api', BACKEND_ACCESS_KEY: env.URGENT_ACCESS_KEY, BACKEND_SECRET_KEY: env.URGENT_SECRET_KEY },
    encoding: 'utf8',
    timeout: 120000,
  });
  if (r.status !== 0) throw new Error(`bai start failed: ${r.stderr}`);
});

await step('the owner is warned at once, with why', async () => {
  const note = byTest(`preempted-${victim}`);
  await note.waitFor();
  const text = await note.innerText();
  if (!text.includes('preempted: for session')) throw new Error(`the warning says ${JSON.stringify(text)}`);
  if (!text.includes('SIGTERM')) throw new Error(`the warning says ${JSON.stringify(text)}`);
});

await step('the Notifications list keeps it', async () => {
  await byTest('notifications').click();
  await page.locator('.ant-list-item', { hasText: `${victim} was preempted` }).first().waitFor();
});

await done();
