// The web UI through a switch of managers, in Debian's chromium driven by playwright-core
// against a running `baid up`: the browser's requests are answered `503 no-leader` (as a
// standby answers while no manager leads) by intercepting them, so the UI must wait with its
// notice shown and then carry on; a create whose first answer was lost after the server made
// the session is sent again with the same Idempotency-Key, and one session results.
//   BAI_URL, BAI_EMAIL, BAI_PASSWORD   where and who (a normal user)
//   BAI_ENDED                           an ended session of that user (the Finished tab shows it)
//   CHROMIUM, SCREENSHOTS               as in run.mjs
// Prints one line per step and "switching: N passed" at the end; exits non-zero on the first failure.
import { open } from './browser.mjs';

const url = process.env.BAI_URL;
const email = process.env.BAI_EMAIL;
const password = process.env.BAI_PASSWORD;
const ended = process.env.BAI_ENDED;
if (!url || !email || !password || !ended) {
  console.error('set BAI_URL, BAI_EMAIL, BAI_PASSWORD and BAI_ENDED');
  process.exit(2);
}
const shots = process.env.SCREENSHOTS;

const { page, step, done } = await open('switching');
const byTest = (id) => page.getByTestId(id);
const expectText = (locator, text) => locator.filter({ hasText: text }).first().waitFor();
/** The answer of a standby while no manager leads. */
const NO_LEADER = {
  status: 503,
  contentType: 'application/problem+json',
  body: JSON.stringify({
    type: 'https://api.backend.ai/probs/no-leader',
    title: 'No manager leads the cluster now.',
    msg: 'this manager stands by and cannot reach a leading manager (one is taking over); try again in a few seconds',
  }),
};

await step('log in', async () => {
  await page.goto(url);
  await byTest('login-email').fill(email);
  await byTest('login-password').fill(password);
  await byTest('login-submit').click();
  await expectText(byTest('whoami'), email);
});

await step('a list refused with 503 no-leader is waited for with a notice, then shown', async () => {
  // The next three GraphQL requests find no leader; the fourth goes through.
  let refused = 0;
  await page.route('**/admin/gql', async (route) => {
    if (refused < 3) {
      refused += 1;
      await route.fulfill(NO_LEADER);
    } else {
      await route.continue();
    }
  });
  await byTest('tab-finished').click();
  await expectText(byTest('switching-notice'), 'switching managers, retrying');
  if (shots) await page.screenshot({ path: `${shots}/switching-notice.png` });
  await expectText(byTest(`status-${ended}`), 'TERMINATED');
  await byTest('switching-notice').waitFor({ state: 'detached' });
  if (refused !== 3) throw new Error(`${refused} requests were refused`);
  await page.unroute('**/admin/gql');
});

await step('a create whose answer was lost is sent again with the same Idempotency-Key: one session', async () => {
  const name = `switch-once-${Date.now() % 100000}`;
  const keys = [];
  await page.route(`${new URL('/session', url)}`, async (route) => {
    const req = route.request();
    if (req.method() !== 'POST') return route.continue();
    keys.push(req.headers()['idempotency-key']);
    if (keys.length === 1) {
      // The server makes the session, and its answer is lost in the switch.
      const made = await route.fetch();
      if (!made.ok()) throw new Error(`the first create: ${made.status()} ${await made.text()}`);
      await route.fulfill(NO_LEADER);
    } else {
      await route.continue();
    }
  });
  await byTest('tab-running').click();
  await byTest('start').click();
  await byTest('session-name').fill(name);
  await byTest('skip-to-review').click();
  await byTest('launch').click();
  await byTest('no-folder-start').click();
  await expectText(byTest('switching-notice'), 'switching managers, retrying');
  // The launcher hears of one created session and goes back to the list (the session may
  // wait in the queue: which tab shows it does not matter here).
  await byTest('toast-status').waitFor();
  await byTest('tab-running').waitFor();
  await byTest('switching-notice').waitFor({ state: 'detached' });
  await page.unroute(`${new URL('/session', url)}`);
  if (keys.length !== 2 || !keys[0] || keys[0] !== keys[1]) throw new Error(`the creates' keys: ${JSON.stringify(keys)}`);
  const r = await page.request.post(new URL('/admin/gql', url).toString(), {
    headers: { 'X-BAI-Web': '1' },
    data: { query: 'query { compute_session_list(limit: 1000, offset: 0) { items { name } } }', variables: {} },
  });
  const items = (await r.json()).data.compute_session_list.items.filter((i) => i.name === name);
  if (items.length !== 1) throw new Error(`${items.length} sessions named ${name}`);
  const gone = await page.request.delete(new URL(`/session/${name}`, url).toString(), { headers: { 'X-BAI-Web': '1' } });
  if (!gone.ok()) throw new Error(`terminating ${name}: ${gone.status()} ${await gone.text()}`);
});

await done();
