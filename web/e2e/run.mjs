// End-to-end test of the web UI in a real browser: Debian's chromium driven by
// playwright-core (no browser download), against a running `baid up`.
//   BAI_URL, BAI_EMAIL, BAI_PASSWORD   where and who (a normal user)
//   BAI_ADMIN_EMAIL, BAI_ADMIN_PASSWORD a superadmin (optional: the admin steps run with it)
//   BAI_FOLDER                          an existing data folder of that user to mount
//   BAI_MODEL_DIR                       the model folder's files (default tests/fixtures/model-nb)
//   CHROMIUM                            the browser (default /usr/bin/chromium)
//   SCREENSHOTS                         if set, a directory for screenshots of the main pages
// Prints one line per step and "e2e: N passed" at the end; exits non-zero on the first failure.
import { open } from './browser.mjs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const url = process.env.BAI_URL;
const email = process.env.BAI_EMAIL;
const password = process.env.BAI_PASSWORD;
const folder = process.env.BAI_FOLDER;
const shots = process.env.SCREENSHOTS;
if (!url || !email || !password || !folder) {
  console.error('set BAI_URL, BAI_EMAIL, BAI_PASSWORD and BAI_FOLDER');
  process.exit(2);
}
const modelDir = process.env.BAI_MODEL_DIR || fileURLToPath(new URL('../../tests/fixtures/model-nb/', import.meta.url));
const modelFiles = ['model-definition.yaml', 'train.py', 'serve.py', 'corpus.tsv'];
// The user shares a folder with this account; the admin steps accept it.
const adminEmailForShare = process.env.BAI_ADMIN_EMAIL || 'admin@bai.local';
// Replicas start as inference sessions that train the model before serving: minutes on a
// busy machine.
const SERVE_MS = 300000;

const { browser, page, step, done, context } = await open('e2e', { width: 1400, height: 900, failureShot: 'failure' });
const byTest = (id) => page.getByTestId(id);
async function closeModal() {
  const close = page.locator('.ant-modal-wrap:visible .ant-modal-close').last();
  await close.click();
  await page.locator('.ant-modal-wrap:visible').first().waitFor({ state: 'detached' }).catch(() => {});
  await page.waitForFunction(() => ![...document.querySelectorAll('.ant-modal-wrap')].some((w) => getComputedStyle(w).display !== 'none'));
}
const expectText = async (locator, text) => {
  await locator.filter({ hasText: text }).first().waitFor();
};
/** A GraphQL call as the logged-in browser makes it (its session cookie). */
async function gql(query) {
  const r = await page.request.post(new URL('/admin/gql', url).toString(), { headers: { 'X-BAI-Web': '1' }, data: { query, variables: {} } });
  const body = await r.json();
  if (!r.ok() || body.errors?.length) throw new Error(`GraphQL ${r.status()}: ${JSON.stringify(body.errors ?? body)}`);
  return body.data;
}
/** A GraphQL call as the superadmin, from a browser context of its own (the page stays the
 *  user's); null without the superadmin's credentials. */
async function adminGql(query) {
  if (!process.env.BAI_ADMIN_EMAIL || !process.env.BAI_ADMIN_PASSWORD) return null;
  const ctx = await browser.newContext();
  try {
    const headers = { 'X-BAI-Web': '1' };
    const login = await ctx.request.post(new URL('/server/login', url).toString(), {
      headers,
      data: { username: process.env.BAI_ADMIN_EMAIL, password: process.env.BAI_ADMIN_PASSWORD },
    });
    if (!login.ok()) throw new Error(`superadmin login: ${login.status()} ${await login.text()}`);
    const r = await ctx.request.post(new URL('/admin/gql', url).toString(), { headers, data: { query, variables: {} } });
    const body = await r.json();
    if (!r.ok() || body.errors?.length) throw new Error(`GraphQL ${r.status()}: ${JSON.stringify(body.errors ?? body)}`);
    return body.data;
  } finally {
    await ctx.close();
  }
}
/** Sets the limit of customized images of the user's resource policy (as the superadmin). */
async function setImageLimit(policy, n) {
  const d = await adminGql(`mutation { modify_user_resource_policy(name: ${JSON.stringify(policy)}, props: { max_customized_image_count: ${n} }) { ok msg } }`);
  if (d && !d.modify_user_resource_policy.ok) throw new Error(`policy: ${d.modify_user_resource_policy.msg}`);
  return d !== null;
}
/** Picks session type Inference in the launcher (the radio button's label: its input is hidden). */
async function chooseInference() {
  await page.locator('label.ant-radio-button-wrapper', { has: byTest('type-inference') }).click();
  await page.locator('label.ant-radio-button-wrapper-checked', { has: byTest('type-inference') }).waitFor();
}
/** Picks a model folder in the launcher's Inference page. */
async function chooseModelFolder(name) {
  await byTest('launch-model').click();
  await page.locator('.ant-select-dropdown:visible .ant-select-item-option').filter({ hasText: name }).click();
  await expectText(byTest('launch-definition-ok'), 'port 8000');
}

await step('a wrong password is refused beside the form', async () => {
  await page.goto(url);
  await byTest('login-email').fill(email);
  await byTest('login-password').fill('not the password');
  await byTest('login-submit').click();
  await expectText(byTest('login-error'), 'wrong');
});

await step('log in', async () => {
  await byTest('login-password').fill(password);
  await byTest('login-submit').click();
  await expectText(byTest('whoami'), email);
});

const siderWidth = () => page.evaluate(() => document.querySelector('[data-testid="sidebar"]').getBoundingClientRect().width);
async function waitSider(narrow) {
  await page.waitForFunction((n) => {
    const w = document.querySelector('[data-testid="sidebar"]').getBoundingClientRect().width;
    return n ? w < 100 : w >= 200;
  }, narrow);
}

await step('the left sidebar lists the pages, marks the current one, collapses, and folds on a narrow window', async () => {
  const sider = byTest('sidebar');
  const box = await sider.boundingBox();
  if (!box || box.x > 1 || box.height < 600) throw new Error(`the sidebar is at ${JSON.stringify(box)}`);
  const labels = (await sider.locator('.ant-menu-item').allInnerTexts()).map((t) => t.trim());
  if (labels.join() !== 'Sessions,Data,Serving,My Environments,Settings') throw new Error(`a user's pages: ${labels.join(', ')}`);
  await expectText(sider.locator('.ant-menu-item-selected'), 'Sessions');
  await page.getByRole('menuitem', { name: 'Data' }).click();
  await expectText(sider.locator('.ant-menu-item-selected'), 'Data');
  await page.getByRole('menuitem', { name: 'Sessions' }).click();
  await expectText(sider.locator('.ant-menu-item-selected'), 'Sessions');
  // The trigger folds it to icons and back.
  await sider.locator('.ant-layout-sider-trigger').click();
  await waitSider(true);
  await sider.locator('.ant-layout-sider-trigger').click();
  await waitSider(false);
  // At 1280×800 nothing overflows sideways; a narrow window folds it, a wide one opens it.
  await page.setViewportSize({ width: 1280, height: 800 });
  await waitSider(false);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 0) throw new Error(`the page is ${overflow}px wider than 1280`);
  await page.setViewportSize({ width: 700, height: 800 });
  await waitSider(true);
  await page.getByRole('menuitem', { name: 'Data' }).click();
  await expectText(sider.locator('.ant-menu-item-selected'), 'Data');
  await page.getByRole('menuitem', { name: 'Sessions' }).click();
  await page.setViewportSize({ width: 1400, height: 900 });
  await waitSider(false);
  if ((await siderWidth()) < 200) throw new Error('the sidebar stayed folded');
});

await step("the launcher's environments and versions come from the image catalogue, with the image name and help", async () => {
  const { images } = await gql('query { images { name tags { key } } }');
  const general = new Set(images.filter((i) => !i.tags.some((t) => t.key === 'Customized')).map((i) => i.name));
  await byTest('start').click();
  await byTest('next').click();
  await expectText(byTest('image-name'), 'bai/python:');
  await byTest('environment').click();
  await byTest('env-option-Python').waitFor();
  if (general.has('bai/python-ml')) {
    // Python ML needs more memory: its minimum is shown under the version.
    await byTest('env-option-Python ML').click();
    await expectText(byTest('image-name'), 'bai/python-ml:');
    await page.getByText('Needs at least 1 CPU core and 256 MiB of memory.').waitFor();
    await byTest('environment').click();
    await byTest('env-option-Python').click();
    await expectText(byTest('image-name'), 'bai/python:');
  }
  await byTest('version').click();
  await page.locator('.ant-select-dropdown:visible [data-testid^="version-option-"]').first().waitFor();
  await page.keyboard.press('Escape');
  await byTest('help-cpu').click();
  await expectText(byTest('help-text-cpu'), 'CPU cores');
  if (shots) await page.screenshot({ path: `${shots}/launcher-environments.png` });
  await page.getByRole('button', { name: 'Cancel' }).click();
  await byTest('tab-running').waitFor();
});

await step('invalid inputs show their errors and cannot be launched', async () => {
  await byTest('start').click();
  await byTest('session-name').fill('ab');
  await page.getByText('Use at least 4 characters.').first().waitFor();
  await byTest('skip-to-review').click();
  await byTest('error-card').waitFor();
  await expectText(byTest('error-card'), 'Use at least 4 characters.');
  if (!(await byTest('launch').isDisabled())) throw new Error('Launch is enabled with an invalid name');
});

await step('launch through every launcher page with a folder and an env var', async () => {
  await byTest('edit-0').click();
  await byTest('session-name').fill('websess1');
  if (shots) await page.screenshot({ path: `${shots}/launcher.png` });
  await byTest('next').click();
  // Half a (mock) GPU from a preset that asks for it: the field speaks the node's unit,
  // fGPU, and the Confirm card below shows it.
  const acc = byTest('res-accelerator');
  const accInput = (await acc.evaluate((e) => e.tagName)) === 'INPUT' ? acc : acc.locator('input');
  await byTest('preset').click();
  await page.locator('.ant-select-item-option', { hasText: 'gpu-half' }).click();
  await page.waitForFunction((el) => Number(el.value) === 0.5, await accInput.elementHandle());
  await page.getByText('AI accelerator (fGPU)').first().waitFor();
  // A cluster of two containers, each with one core: the image needs at least one, so half
  // a core is refused beside the field.
  const fill = async (id, value) => {
    const field = byTest(id);
    const input = (await field.evaluate((e) => e.tagName)) === 'INPUT' ? field : field.locator('input');
    await input.fill(value);
    await input.blur();
  };
  await fill('res-cpu', '0.5');
  await expectText(byTest('res-cpu-error'), 'needs at least 1 CPU core');
  await fill('res-cpu', '1');
  await byTest('res-cpu-error').waitFor({ state: 'detached' });
  await fill('cluster-size', '2');
  await page.getByText('main1, sub1').first().waitFor();
  // Multi node: on this one-node platform both containers land on the local agent, joined by
  // the session's overlay all the same.
  await byTest('cluster-multi').click();
  await page.getByText('spread over the nodes').first().waitFor();
  await byTest('env-add').click();
  await byTest('env-key-0').fill('1BAD');
  await page.getByText('not starting with a digit').first().waitFor();
  await byTest('env-key-0').fill('GREETING');
  await byTest('env-value-0').fill('hello-from-the-ui');
  await byTest('next').click();
  // The folder's name opens the Data page's explorer: into a new sub-folder and back up.
  await byTest(`launcher-folder-${folder}`).click();
  await byTest('explorer-table').waitFor();
  await byTest('explorer-mkdir').click();
  await byTest('mkdir-input').fill('from-launcher');
  await byTest('mkdir-ok').click();
  await byTest('entry-from-launcher').click();
  await page.locator('.ant-modal-title').filter({ hasText: `${folder}/from-launcher` }).waitFor();
  await page.locator('.ant-modal').getByRole('button', { name: 'Up', exact: true }).click();
  await byTest('entry-from-launcher').waitFor();
  await closeModal();
  await page.getByRole('row', { name: new RegExp(folder) }).getByRole('checkbox').check();
  await byTest('next').click();
  await byTest('preopen').fill('80');
  await page.getByText('out of range').first().waitFor();
  await byTest('preopen').fill('8080, 8081');
  await byTest('next').click();
  await expectText(page.locator('.ant-card'), folder);
  await expectText(page.locator('.ant-card'), 'GREETING=hello-from-the-ui');
  await expectText(page.locator('.ant-card'), '0.50 fGPU');
  await expectText(page.locator('.ant-card'), '2 containers, multi-node');
  if (shots) await page.screenshot({ path: `${shots}/confirm-and-launch.png` });
  await byTest('launch').click();
  await byTest('tab-running').waitFor();
});

await step('the session shows RUNNING without a manual refresh', async () => {
  await expectText(byTest('status-websess1'), 'RUNNING');
  if (shots) await page.screenshot({ path: `${shots}/sessions.png` });
});

await step('the web terminal answers `echo hi`', async () => {
  const [tab] = await Promise.all([context.waitForEvent('page'), byTest('terminal-websess1').click()]);
  await tab.waitForURL(/\/app\//);
  await tab.waitForSelector('.xterm');
  await tab.waitForTimeout(500);
  await tab.locator('.xterm').click();
  await tab.keyboard.type('echo hi-$GREETING-gpu$BACKENDAI_MOCK_CUDA_DEVICE_COUNT-$(ssh sub1 hostname); touch /home/work/' + folder + '/from-ui.txt\n');
  // The session launched with 0.5 fGPU holds one (mock) device, and its second container
  // answers ssh over the session's overlay.
  await tab.waitForFunction(() => document.querySelector('.xterm')?.textContent?.includes('hi-hello-from-the-ui-gpu1-sub1'), null, { timeout: 30000 });
  if (shots) await tab.screenshot({ path: `${shots}/terminal.png` });
  await tab.close();
});

await step('Jupyter opens through the app proxy', async () => {
  await byTest('apps-websess1').click();
  const [tab] = await Promise.all([context.waitForEvent('page'), byTest('open-app-jupyter').click()]);
  await tab.waitForURL(/\/app\//, { timeout: 90000 });
  await tab.waitForLoadState('domcontentloaded');
  await tab.waitForFunction(() => /jupyter/i.test(document.documentElement.innerHTML), null, { timeout: 90000 });
  const r = await tab.request.get(new URL('api/contents/' + folder, tab.url().split('tree')[0]).toString());
  const body = await r.text();
  if (!body.includes('from-ui.txt')) throw new Error(`Jupyter does not see the file made in the terminal: ${r.status()} ${body.slice(0, 200)}`);
  // The notebook's file browser lists the home directory, the mounted folder among it.
  await tab.getByText(folder, { exact: true }).first().waitFor({ timeout: 90000 });
  if (shots) await tab.screenshot({ path: `${shots}/jupyter.png` });
  await tab.close();
  await closeModal();
});

await step('logs open (the last of the row\'s controls)', async () => {
  const controls = await byTest('logs-websess1').locator('xpath=ancestor::div[contains(concat(" ", @class, " "), " ant-space ")][1]').locator('button').evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')));
  if (controls[controls.length - 1] !== 'logs-websess1') throw new Error(`row controls: ${controls.join(', ')}`);
  await byTest('logs-websess1').click();
  await byTest('logs').waitFor();
  await closeModal();
});

await step('the detail panel shows resource charts, idle checks and kernels', async () => {
  await byTest('session-websess1').click();
  await byTest('detail-name').waitFor();
  // Samples arrive every monitor interval; the panel follows them while it is open.
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="chart-cpu"] polyline').length > 0, null, { timeout: 30000 });
  await byTest('chart-net').locator('svg').waitFor();
  await expectText(byTest('idle-network_timeout'), 'limit 30m');
  await expectText(byTest('idle-utilization'), 'grace period');
  await byTest('idle-utilization').hover();
  await expectText(byTest('utilization-tooltip'), 'threshold 1%');
  // The (i) button explains each checker.
  await byTest('idle-info').click();
  await expectText(byTest('idle-help-session_lifetime'), 'Max session lifetime');
  await expectText(byTest('idle-help-network_timeout'), 'nothing has passed between you and it');
  await expectText(byTest('idle-help-utilization'), 'grace period');
  await byTest('idle-info').click();
  await expectText(byTest('detail-mounts'), `${folder} → /home/work/${folder} (rw)`);
  // The egress policy it runs under: a new installation's group's.
  await expectText(byTest('detail-egress'), 'default');
});

await step("a kernel's log button shows that kernel's logs", async () => {
  for (const host of ['main1', 'sub1']) {
    await byTest(`kernel-log-${host}`).click();
    await page.locator('.ant-modal-title').filter({ hasText: 'kernel' }).waitFor();
    await byTest('logs').waitFor();
    await closeModal();
  }
});

await step('rename in the detail panel (a bad name is refused beside the field)', async () => {
  await byTest('rename').click();
  await byTest('rename-input').fill('ab');
  await expectText(byTest('rename-error'), 'Use at least 4 characters.');
  if (!(await byTest('rename-save').isDisabled())) throw new Error('Save is enabled with an invalid name');
  await byTest('rename-input').fill('websess2');
  await byTest('rename-save').click();
  await expectText(byTest('detail-name'), 'websess2');
  if (shots) await page.screenshot({ path: `${shots}/session-detail.png` });
});

await step('scheduling history lists the records, filters them and expands sub-steps', async () => {
  await byTest('detail-history').click();
  const modal = page.locator('.ant-modal').filter({ hasText: 'Scheduling history' });
  await modal.locator('.ant-table-row').first().waitFor();
  // The scheduler's record has sub-steps: expand it.
  await modal.locator('.ant-table-row-expand-icon:not(.ant-table-row-expand-icon-spaced)').first().click();
  await modal.locator('th').filter({ hasText: 'Started At' }).first().waitFor();
  await expectText(modal.locator('.ant-table-expanded-row'), 'agent_selection');
  if (shots) await page.screenshot({ path: `${shots}/scheduling-history.png` });
  await byTest('history-filter-id').fill('abc');
  await page.getByText('IDs are UUIDs, as the ID column shows them.').waitFor();
  // A record's id (a UUID) filters down to exactly that record.
  await byTest('history-filter-id').fill('');
  await modal.locator('.ant-table-row').first().waitFor();
  const rowsBefore = await modal.locator('[data-testid^="history-id-"]').count();
  const firstId = (await modal.locator('[data-testid^="history-id-"]').first().getAttribute('data-testid')).replace('history-id-', '');
  await byTest('history-filter-id').fill(firstId);
  await page.waitForFunction(() => document.querySelectorAll('.ant-modal [data-testid^="history-id-"]').length === 1);
  await byTest(`history-id-${firstId}`).waitFor();
  if (rowsBefore < 2) throw new Error(`expected several records, found ${rowsBefore}`);
  await byTest('history-filter-id').fill('');
  await byTest('history-filter-phase').fill('no-such-phase');
  await modal.locator('.ant-table-row').first().waitFor({ state: 'detached' });
  await byTest('history-filter-phase').fill('');
  await modal.locator('.ant-table-row').first().waitFor();
  await closeModal();
  await page.locator('.ant-drawer-close').click();
  await expectText(byTest('session-websess2'), 'websess2');
});

await step("the detail panel's Commit converts the running session to an image (a 3-character name refused beside the field)", async () => {
  await byTest('session-websess2').click();
  // The control icons in the seed's order.
  await byTest('detail-terminate').waitFor();
  const icons = await byTest('detail-controls').locator('button[data-testid^="detail-"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')));
  const order = ['detail-apps', 'detail-terminal', 'detail-terminate', 'detail-commit', 'detail-logs'];
  if (icons.join() !== order.join()) throw new Error(`control icons: ${icons.join(', ')}`);
  await byTest('detail-commit').click();
  await expectText(byTest('commit-warning'), '/home/work');
  await byTest('commit-name').fill('abc');
  await expectText(byTest('commit-name-error'), 'Use at least 4 characters.');
  if (!(await byTest('commit-push').isDisabled())) throw new Error('Push is enabled with a 3-character name');
  await byTest('commit-name').fill('webimg1');
  await byTest('commit-push').click();
  // A commit of the container's own layer: seconds, more on a busy machine.
  await byTest('commit-done').filter({ hasText: 'webimg1' }).waitFor({ timeout: 120000 });
  await expectText(byTest('commit-reference'), '-customized_');
  if (shots) await page.screenshot({ path: `${shots}/commit.png` });
  await byTest('commit-close').click();
  await page.locator('.ant-drawer-close').click();
});

await step("the launcher's Customized group lists the new image with a copy icon", async () => {
  await byTest('start').click();
  await byTest('next').click();
  await byTest('environment').click();
  await byTest('env-group-customized').waitFor();
  const option = byTest('env-option-customized-webimg1');
  await option.locator('.ant-typography-copy').waitFor();
  await option.getByText('webimg1', { exact: true }).click();
  await expectText(byTest('image-name'), '-customized_');
  await page.getByRole('button', { name: 'Cancel' }).click();
  await byTest('tab-running').waitFor();
});

// The user's limit of customized images, set to 1 for the steps below and put back after.
let imagePolicy = null;
if (process.env.BAI_ADMIN_EMAIL && process.env.BAI_ADMIN_PASSWORD) {
  await step('at the limit of customized images, the commit dialog says so and links to My Environments', async () => {
    const { user_resource_policy: p } = await gql('query { user_resource_policy { name max_customized_image_count } }');
    imagePolicy = p;
    await setImageLimit(p.name, 1);
    await byTest('session-websess2').click();
    await byTest('detail-commit').click();
    await expectText(byTest('commit-limit'), 'You have 1 of 1 customized images; remove one in My Environments');
    // The name of one of the user's images replaces it: that is still allowed.
    await byTest('commit-name').fill('webimg1');
    await expectText(byTest('commit-limit'), 'replaces your image of that name');
    await byTest('commit-open-environments').click();
    await expectText(byTest('sidebar').locator('.ant-menu-item-selected'), 'My Environments');
    await byTest('myenv-name-webimg1').waitFor();
    await page.waitForFunction(() => !document.querySelector('.ant-modal-wrap, .ant-drawer-open'));
  });
}

let webimg1 = '';
await step('My Environments lists the image with its size, full name and origin; Copy name copies it', async () => {
  await page.getByRole('menuitem', { name: 'My Environments' }).click();
  await expectText(byTest('myenv-count'), `1 of ${imagePolicy ? 1 : ''}`);
  await expectText(byTest('myenv-ref-webimg1'), '-customized_');
  webimg1 = (await byTest('myenv-ref-webimg1').innerText()).trim();
  const size = (await byTest('myenv-size-webimg1').innerText()).trim();
  if (!/^\d+(\.\d)? (B|KiB|MiB|GiB)$/.test(size)) throw new Error(`the size is ${JSON.stringify(size)}`);
  await expectText(byTest('myenv-origin-webimg1'), 'a session of bai/python:');
  if (shots) await page.screenshot({ path: `${shots}/my-environments.png` });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(url).origin });
  await byTest('myenv-copy-webimg1').click();
  await expectText(byTest('myenv-copied'), webimg1);
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  if (copied !== webimg1) throw new Error(`the clipboard holds ${JSON.stringify(copied)}, not ${webimg1}`);
});

await step('My Environments: Forget (after a confirmation) takes the image off the list and the limit', async () => {
  await byTest('myenv-forget-webimg1').click();
  await byTest('myenv-forget-ok').click();
  await byTest('myenv-name-webimg1').waitFor({ state: 'detached' });
  await expectText(byTest('myenv-count'), '0 of');
  const { customized_images: left } = await gql('query { customized_images { id } }');
  if (left.length) throw new Error(`still listed: ${JSON.stringify(left)}`);
  // Forgetting leaves the engine its copy: removed here, so nothing of the test stays there.
  try {
    execFileSync('docker', ['rmi', '-f', webimg1], { stdio: 'ignore' });
  } catch {
    console.log(`     (could not remove ${webimg1} from the engine)`);
  }
});

await step('My Environments: a second image, made under the limit, is purged (after a confirmation)', async () => {
  await page.getByRole('menuitem', { name: 'Sessions' }).click();
  await byTest('session-websess2').click();
  await byTest('detail-commit').click();
  await byTest('commit-name').fill('webimg2');
  await byTest('commit-push').click();
  await byTest('commit-done').filter({ hasText: 'webimg2' }).waitFor({ timeout: 120000 });
  // At the limit again, which the dialog now says.
  if (imagePolicy) await expectText(byTest('commit-limit'), 'You have 1 of 1 customized images');
  await byTest('commit-close').click();
  await page.locator('.ant-drawer-close').click();
  await page.getByRole('menuitem', { name: 'My Environments' }).click();
  await byTest('myenv-name-webimg2').waitFor();
  await byTest('myenv-purge-webimg2').click();
  await byTest('myenv-purge-ok').click();
  await byTest('myenv-name-webimg2').waitFor({ state: 'detached' });
  await expectText(byTest('myenv-count'), '0 of');
  const { customized_images: left } = await gql('query { customized_images { id } }');
  if (left.length) throw new Error(`still listed: ${JSON.stringify(left)}`);
  if (imagePolicy) await setImageLimit(imagePolicy.name, imagePolicy.max_customized_image_count);
  await page.getByRole('menuitem', { name: 'Sessions' }).click();
  await byTest('tab-running').waitFor();
});

await step('terminate, then find it under Finished with the reason behind the info button', async () => {
  await byTest('terminate-websess2').click();
  await page.getByRole('button', { name: 'Terminate', exact: true }).last().click();
  await byTest('tab-finished').click();
  await expectText(byTest('status-websess2'), 'TERMINATED');
  await byTest('session-websess2').click();
  await byTest('status-info').click();
  await expectText(byTest('status-details'), 'user-requested');
  await page.locator('.ant-drawer-close').click();
});

await step('Recent History reopens a launch on Confirm and Launch; entries can be renamed and pinned', async () => {
  await byTest('start').click();
  await byTest('recent-history').click();
  await byTest('history-rename-websess1').click();
  await byTest('history-label-input').fill('my favourite');
  await byTest('history-label-ok').click();
  const item = page.locator('.ant-list-item').filter({ hasText: 'my favourite' });
  await item.locator('.ant-switch').click();
  await item.locator('.ant-switch-checked').waitFor();
  await item.getByText('my favourite').click();
  await byTest('launch').waitFor();
  await expectText(page.locator('.ant-card'), 'websess1');
  await expectText(page.locator('.ant-card'), 'GREETING=hello-from-the-ui');
  await page.getByRole('button', { name: 'Cancel' }).click();
  await byTest('tab-running').waitFor();
});

await step('Data page: create (bad names refused beside the field), explore, upload, download, mkdir, delete, rename', async () => {
  await page.getByRole('menuitem', { name: 'Data' }).click();
  await byTest('data-create').click();
  await byTest('new-folder-input').fill('bad name');
  await expectText(byTest('new-folder-error'), 'is not allowed');
  await byTest('new-folder-input').fill('.bashrc');
  await byTest('new-folder-ok').click();
  await expectText(byTest('new-folder-error'), 'reserved');
  await byTest('new-folder-input').fill('uidocs');
  await byTest('new-folder-ok').click();
  await byTest('folder-uidocs').click();
  await byTest('explorer-mkdir').click();
  await byTest('mkdir-input').fill('sub');
  await byTest('mkdir-ok').click();
  await byTest('entry-sub').waitFor();
  await page.locator('.ant-modal input[type=file]').setInputFiles({ name: 'hello.txt', mimeType: 'text/plain', buffer: Buffer.from('hello from the browser\n') });
  await byTest('entry-hello.txt').waitFor();
  const seen = context.waitForEvent('request', (r) => r.url().includes('/storage/download'));
  const [popup] = await Promise.all([context.waitForEvent('page'), byTest('download-hello.txt').click()]);
  const url = (await seen).url();
  await popup.close().catch(() => {});
  const body = await (await page.request.get(url)).text();
  if (body !== 'hello from the browser\n') throw new Error(`downloaded ${JSON.stringify(body)}`);
  await byTest('delete-hello.txt').click();
  await page.getByRole('button', { name: 'Delete', exact: true }).last().click();
  await byTest('entry-hello.txt').waitFor({ state: 'detached' });
  await closeModal();
  await byTest('folder-rename-uidocs').click();
  await byTest('rename-folder-input').fill(folder);
  await byTest('rename-folder-ok').click();
  await expectText(byTest('rename-folder-error'), 'already have a data folder');
  await byTest('rename-folder-input').fill('uidocs2');
  await byTest('rename-folder-ok').click();
  await byTest('folder-uidocs2').waitFor();
  // Deleting moves the folder to the trash; it comes back whole, and is purged from there.
  await byTest('folder-delete-uidocs2').click();
  await page.getByRole('button', { name: 'Move to trash', exact: true }).last().click();
  await byTest('folder-uidocs2').waitFor({ state: 'detached' });
  await byTest('trash-uidocs2').waitFor();
  await byTest('trash-restore-uidocs2').click();
  await byTest('folder-uidocs2').waitFor();
  await byTest('folder-delete-uidocs2').click();
  await page.getByRole('button', { name: 'Move to trash', exact: true }).last().click();
  await byTest('trash-uidocs2').waitFor();
  if (shots) await page.screenshot({ path: `${shots}/data.png` });
  await byTest('trash-purge-uidocs2').click();
  await page.getByRole('button', { name: 'Delete forever', exact: true }).last().click();
  await byTest('trash-uidocs2').waitFor({ state: 'detached' });
});

await step('Data page: a model folder, its files uploaded through the explorer, its definition checked', async () => {
  await byTest('data-create').click();
  await byTest('new-folder-input').fill('uimodel');
  await byTest('new-folder-mode-model').click();
  await byTest('new-folder-ok').click();
  await expectText(byTest('folder-mode-uimodel'), 'model');
  await byTest('folder-uimodel').click();
  // Empty: the check says what is missing.
  await expectText(byTest('definition-problem'), 'model-definition.yaml');
  await page.locator('.ant-modal input[type=file]').setInputFiles(modelFiles.map((f) => join(modelDir, f)));
  for (const f of modelFiles) await byTest(`entry-${f}`).waitFor();
  await expectText(byTest('definition-ok'), 'port 8000');
  await expectText(byTest('definition-ok'), 'health check /health');
  if (shots) await page.screenshot({ path: `${shots}/model-folder.png` });
  await closeModal();
});

await step("Data page: SFTP on a folder starts a system session, shows host, port and user, and offers its key; the Sessions page's System tab lists it", async () => {
  await page.getByRole('menuitem', { name: 'Data' }).click();
  await byTest(`folder-sftp-${folder}`).click();
  await byTest('sftp-access').waitFor({ timeout: 120000 });
  const port = Number((await byTest('sftp-port').innerText()).trim());
  if (!(port >= 1024)) throw new Error(`the SFTP port is ${port}`);
  await expectText(byTest('sftp-user'), 'work');
  await expectText(byTest('sftp-command'), `-P ${port} work@`);
  const [download] = await Promise.all([page.waitForEvent('download'), byTest('sftp-key').click()]);
  if (download.suggestedFilename() !== `sftp-${folder}.key`) throw new Error(`the key is named ${download.suggestedFilename()}`);
  const key = (await import('node:fs')).readFileSync(await download.path(), 'utf8');
  if (!key.startsWith('-----BEGIN OPENSSH PRIVATE KEY-----')) throw new Error('the download is no private key');
  if (shots) await page.screenshot({ path: `${shots}/sftp.png` });
  await closeModal();
  // Not among the user's own sessions; under System, and ended from there.
  await page.getByRole('menuitem', { name: 'Sessions' }).click();
  await byTest('tab-system').click();
  const row = page.locator('[data-testid^="session-sftp-"]').first();
  await row.waitFor();
  const name = ((await row.getAttribute('data-testid')) ?? '').replace(/^session-/, '');
  await byTest(`terminate-${name}`).click();
  await page.getByRole('button', { name: 'Terminate', exact: true }).last().click();
  await expectText(byTest(`status-${name}`), 'TERMINATED');
  // The Running tab's list replaces the System tab's rows once it loads: the session is not in it.
  await byTest('tab-running').click();
  await byTest(`session-${name}`).waitFor({ state: 'detached' });
  await page.getByRole('menuitem', { name: 'Data' }).click();
});

await step('Data page: share a folder (a bad email refused beside the field), the invitation pending, and a clone', async () => {
  await byTest('folder-share-uimodel').click();
  await byTest('share-emails').fill('not-an-email');
  await expectText(page.locator('.ant-modal .ant-form-item-explain'), 'is not an email address');
  await byTest('share-emails').fill('nobody@bai.local');
  await byTest('share-submit').click();
  await expectText(page.locator('.ant-modal .ant-form-item-explain'), 'no user has the email');
  await byTest('share-perm-ro').click();
  await byTest('share-emails').fill(adminEmailForShare);
  await byTest('share-submit').click();
  await expectText(byTest('share-note'), 'Invited 1');
  await byTest(`pending-${adminEmailForShare}`).waitFor();
  await closeModal();
  await byTest('folder-clone-uimodel').click();
  await byTest('clone-folder-input').fill('uimodel');
  await byTest('clone-folder-ok').click();
  await expectText(byTest('clone-folder-error'), 'already have a data folder');
  await byTest('clone-folder-input').fill('mcopy');
  await byTest('clone-folder-ok').click();
  await byTest('folder-mcopy').click();
  for (const f of modelFiles) await byTest(`entry-${f}`).waitFor();
  await closeModal();
});

await step('Serving: a bad replicas value is refused beside the field', async () => {
  await page.getByRole('menuitem', { name: 'Serving' }).click();
  await byTest('service-create').click();
  await byTest('svc-name').fill('ui-topics');
  const modal = page.locator('.ant-modal').filter({ hasText: 'Create a model service' });
  await modal.locator('.ant-form-item').filter({ hasText: 'Model folder' }).locator('.ant-select-selector').click();
  await page.locator('.ant-select-item-option').filter({ hasText: 'uimodel' }).click();
  // The chosen folder's definition is checked at once.
  await expectText(byTest('svc-definition-ok'), 'port 8000');
  await byTest('svc-replicas').fill('99');
  await expectText(byTest('svc-replicas-error'), 'out of range');
  if (!(await byTest('svc-create-ok').isDisabled())) throw new Error('Create is enabled with 99 replicas');
  await byTest('svc-mem').fill('1');
  await expectText(byTest('svc-mem-error'), '64 MiB');
});

await step('Serving: create a service of 1 replica; it turns HEALTHY with a URL', async () => {
  await byTest('svc-replicas').fill('1');
  await byTest('svc-cpu').fill('0.5');
  await byTest('svc-mem').fill('256m');
  await byTest('svc-create-ok').click();
  await byTest('service-ui-topics').waitFor();
  await byTest('service-status-ui-topics').filter({ hasText: 'HEALTHY' }).waitFor({ timeout: SERVE_MS });
  await expectText(byTest('service-url-ui-topics'), 'http');
  await expectText(byTest('service-routes-ui-topics'), '1 / 1');
  if (shots) await page.screenshot({ path: `${shots}/serving.png` });
});

await step("Serving: a second service of that name is refused beside the name field", async () => {
  await byTest('service-create').click();
  await byTest('svc-name').fill('ui-topics');
  const modal = page.locator('.ant-modal').filter({ hasText: 'Create a model service' });
  await modal.locator('.ant-form-item').filter({ hasText: 'Model folder' }).locator('.ant-select-selector').click();
  await page.locator('.ant-select-item-option').filter({ hasText: 'uimodel' }).click();
  await byTest('svc-create-ok').click();
  await expectText(byTest('svc-name-error'), 'exists');
  await closeModal();
});

await step("Launcher: Inference asks for a model folder, and a taken service name is refused beside the name field", async () => {
  await page.getByRole('menuitem', { name: 'Sessions' }).click();
  await byTest('start').click();
  await chooseInference();
  await byTest('inference-note').waitFor();
  await byTest('skip-to-review').click();
  await expectText(byTest('error-card'), 'Choose a model folder.');
  if (!(await byTest('launch').isDisabled())) throw new Error('Create is enabled without a model folder');
  await byTest('edit-0').click();
  // A dot is fine in a session's name, not in a service's.
  await byTest('session-name').fill('ui.topics');
  await expectText(byTest('session-name-error'), 'is not allowed');
  await byTest('session-name').fill('ui-topics');
  await chooseModelFolder('uimodel');
  await byTest('skip-to-review').click();
  await expectText(page.locator('.ant-card'), 'uimodel → /models');
  await byTest('launch').click();
  // The server refuses the name: the launcher shows it beside the field, on its page.
  await expectText(byTest('session-name-error'), 'exists');
  await page.getByRole('button', { name: 'Cancel' }).click();
  await byTest('tab-running').waitFor();
  await page.getByRole('menuitem', { name: 'Serving' }).click();
});

await step('Serving: scale to 2 in the detail drawer and see 2 healthy routes', async () => {
  await byTest('service-ui-topics').click();
  await expectText(byTest('svc-detail-status'), 'HEALTHY');
  await byTest('svc-scale-to').fill('17');
  await expectText(byTest('svc-scale-error'), 'out of range');
  await byTest('svc-scale-to').fill('2');
  await byTest('svc-scale').click();
  await byTest('svc-detail-healthy').filter({ hasText: '2' }).waitFor({ timeout: SERVE_MS });
  await byTest('svc-routes').locator('.ant-table-row').filter({ hasText: 'healthy' }).nth(1).waitFor();
  await expectText(byTest('svc-detail-status'), 'HEALTHY');
});

let endpointUrl = '';
await step('Serving: a token generated once calls the endpoint', async () => {
  endpointUrl = (await byTest('svc-detail-url').innerText()).trim();
  await byTest('svc-token-duration').fill('1d');
  await byTest('svc-token-generate').click();
  await byTest('svc-token').waitFor();
  const token = (await byTest('svc-token').innerText()).trim();
  if (!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(token)) throw new Error(`not a JWT: ${token}`);
  const refused = await page.request.get(`${endpointUrl}/health`);
  if (refused.status() !== 401) throw new Error(`without a token: ${refused.status()}`);
  const ok = await page.request.get(`${endpointUrl}/health`, { headers: { Authorization: `Bearer ${token}` } });
  if (ok.status() !== 200) throw new Error(`with the token: ${ok.status()} ${await ok.text()}`);
});

await step('Serving: add a threshold rule (a bad threshold refused beside the field) and disable it', async () => {
  await byTest('rule-add').click();
  await byTest('rule-threshold').fill('lots');
  await expectText(byTest('rule-threshold-error'), 'number');
  await byTest('rule-threshold').fill('5');
  await byTest('rule-step_size').fill('1');
  await byTest('rule-max_replicas').fill('3');
  await byTest('rule-ok').click();
  await expectText(byTest('rule-text-1'), 'inflight > 5: +1 replica');
  const toggle = byTest('rule-enabled-1');
  await page.locator('[data-testid="rule-enabled-1"][aria-checked="true"]').waitFor();
  await toggle.click();
  await page.locator('[data-testid="rule-enabled-1"][aria-checked="false"]').waitFor();
  const services = await (await page.request.get(new URL('/services?name=ui-topics', url).toString())).json();
  const rules = await (await page.request.get(new URL(`/services/${services[0].id}/rules`, url).toString())).json();
  if (rules.rules.length !== 1 || rules.rules[0].enabled !== false) throw new Error(`rules: ${JSON.stringify(rules)}`);
  if (shots) await page.screenshot({ path: `${shots}/service-detail.png` });
});

await step('Serving: remove the service', async () => {
  await byTest('svc-remove').click();
  await page.getByRole('button', { name: 'Remove', exact: true }).last().click();
  await byTest('service-ui-topics').waitFor({ state: 'detached', timeout: SERVE_MS });
});

await step("Launcher: Inference creates a model service from the model folder with the launcher's choices; it turns HEALTHY on the Serving page, and is removed", async () => {
  await page.getByRole('menuitem', { name: 'Sessions' }).click();
  await byTest('start').click();
  await chooseInference();
  await byTest('session-name').fill('ui-launched');
  await chooseModelFolder('uimodel');
  await byTest('next').click();
  // Replicas instead of a session count; the resources are each replica's.
  const replicas = byTest('replicas');
  const input = (await replicas.evaluate((e) => e.tagName)) === 'INPUT' ? replicas : replicas.locator('input');
  await input.fill('17');
  await input.blur();
  await expectText(byTest('replicas-error'), 'out of range');
  await input.fill('1');
  await input.blur();
  await byTest('replicas-error').waitFor({ state: 'detached' });
  await byTest('skip-to-review').click();
  await expectText(page.locator('.ant-card'), 'uimodel → /models (read-only)');
  await byTest('launch').click();
  // The Serving page shows it, and it turns HEALTHY as a service made there does.
  await expectText(byTest('sidebar').locator('.ant-menu-item-selected'), 'Serving');
  await byTest('service-ui-launched').waitFor();
  await byTest('service-status-ui-launched').filter({ hasText: 'HEALTHY' }).waitFor({ timeout: SERVE_MS });
  await expectText(byTest('service-routes-ui-launched'), '1 / 1');
  await byTest('service-ui-launched').click();
  await expectText(byTest('svc-detail-status'), 'HEALTHY');
  await byTest('svc-remove').click();
  await page.getByRole('button', { name: 'Remove', exact: true }).last().click();
  await byTest('service-ui-launched').waitFor({ state: 'detached', timeout: SERVE_MS });
});

await step('Settings: a dotfile stored (a path outside the home and a bad mode refused beside their fields), edited and deleted', async () => {
  await page.getByRole('menuitem', { name: 'Settings' }).click();
  await byTest('settings-dotfiles').waitFor();
  await byTest('dotfile-new').click();
  await byTest('dotfile-path').fill('/etc/profile');
  await byTest('dotfile-data').fill('set -o vi');
  await byTest('dotfile-save').click();
  await expectText(page.locator('.ant-modal .ant-form-item-explain-error'), 'outside the home directory');
  await byTest('dotfile-path').fill('.inputrc');
  await byTest('dotfile-permission').fill('999');
  await byTest('dotfile-save').click();
  await expectText(page.locator('.ant-modal .ant-form-item-explain-error'), 'three octal digits');
  await byTest('dotfile-permission').fill('600');
  await byTest('dotfile-save').click();
  await byTest('dotfile-row-.inputrc').waitFor();
  if (shots) await page.screenshot({ path: `${shots}/settings.png` });
  // The server has it as the page shows it.
  const stored = await page.request.get(new URL('/user-config/dotfiles?path=.inputrc', url).toString(), { headers: { 'X-BAI-Web': '1' } });
  const d = await stored.json();
  if (d.data !== 'set -o vi' || d.permission !== '600') throw new Error(`stored: ${JSON.stringify(d)}`);
  // A second one at the same path is refused by the server, beside the path.
  await byTest('dotfile-new').click();
  await byTest('dotfile-path').fill('~/.inputrc');
  await byTest('dotfile-save').click();
  await expectText(page.locator('.ant-modal .ant-form-item-explain-error'), 'exists');
  await closeModal();
  await byTest('dotfile-edit-.inputrc').click();
  await byTest('dotfile-data').fill('set editing-mode emacs');
  await byTest('dotfile-save').click();
  await expectText(byTest('settings-dotfiles'), 'set editing-mode emacs');
  await byTest('dotfile-delete-.inputrc').click();
  await byTest('dotfile-delete-ok').click();
  await byTest('dotfile-row-.inputrc').waitFor({ state: 'detached' });
});

await step('log out', async () => {
  if (await page.getByRole('menuitem', { name: 'Agents' }).count()) throw new Error('a user sees the Agents page');
  await byTest('logout').click();
  await byTest('login-submit').waitFor();
});

const adminEmail = process.env.BAI_ADMIN_EMAIL;
const adminPassword = process.env.BAI_ADMIN_PASSWORD;
if (adminEmail && adminPassword) {
  await step("a superadmin sees every user's sessions and launches one for a user", async () => {
    await byTest('login-email').fill(adminEmail);
    await byTest('login-password').fill(adminPassword);
    await byTest('login-submit').click();
    await expectText(byTest('whoami'), 'superadmin');
    // The previous user's Recent History stayed with them (it is kept per user on the server).
    await byTest('start').click();
    await byTest('recent-history').click();
    const recent = page.locator('.ant-modal').filter({ hasText: 'Recent History' });
    await recent.waitFor();
    if ((await recent.innerText()).includes('my favourite')) throw new Error("the superadmin sees the user's Recent History");
    await recent.locator('.ant-modal-close').click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await byTest('tab-finished').click();
    await page.getByRole('row', { name: /websess2/ }).filter({ hasText: email }).waitFor();
    await byTest('start').click();
    await byTest('session-name').fill('forauser');
    await byTest('owner-toggle').click();
    await byTest('owner-email').fill(email);
    await byTest('skip-to-review').click();
    await expectText(byTest('error-card'), "Search for the owner's email first");
    await byTest('edit-0').click();
    await byTest('owner-search').click();
    await byTest('owner-access-key').waitFor();
    await byTest('skip-to-review').click();
    await byTest('launch').click();
    await byTest('no-folder-start').click();
    await byTest('tab-running').click();
    await page.getByRole('row', { name: /forauser/ }).filter({ hasText: email }).waitFor();
    await expectText(byTest('status-forauser'), 'RUNNING');
    await byTest('terminate-forauser').click();
    await page.getByRole('button', { name: 'Terminate', exact: true }).last().click();
  });

  await step("a superadmin accepts the user's invitation: the folder is theirs to read, not to change", async () => {
    await page.getByRole('menuitem', { name: 'Data' }).click();
    await byTest('invitation-accept-uimodel').click();
    await expectText(byTest('folder-owner-uimodel'), 'shared with you');
    await byTest('folder-uimodel').click();
    await byTest('entry-model-definition.yaml').waitFor();
    if (!(await byTest('explorer-upload').isDisabled())) throw new Error('a read-only share can be uploaded to');
    await closeModal();
    if (await byTest('folder-rename-uimodel').count()) throw new Error('a shared folder can be renamed by its invitee');
    await byTest('folder-leave-uimodel').click();
    await page.getByRole('button', { name: 'Leave', exact: true }).last().click();
    await byTest('folder-uimodel').waitFor({ state: 'detached' });
  });

  await step("a superadmin reads the audit log: the user's logins and creates, filtered by who", async () => {
    await page.getByRole('menuitem', { name: 'Audit log' }).click();
    await byTest('audit-table').locator('.ant-table-row').first().waitFor();
    await byTest('audit-actor').fill(email);
    await byTest('audit-action').fill('POST /session');
    await byTest('audit-search').click();
    const rows = byTest('audit-table').locator('.ant-table-row');
    await expectText(rows.first(), 'POST /session');
    await expectText(rows.first(), email);
    await byTest('audit-action').fill('login');
    await byTest('audit-search').click();
    await expectText(rows.first(), 'login');
  });

  await step('a superadmin sees the agents with their resources and devices', async () => {
    await page.getByRole('menuitem', { name: 'Agents' }).click();
    await byTest('agent-table').locator('.ant-table-row').first().waitFor();
    await expectText(byTest('agent-table').locator('.ant-table-row'), 'CPU');
    await expectText(byTest('agent-table').locator('.ant-table-row').first(), 'alive');
  });

  await step("a superadmin changes a group's egress policy (a bad destination refused beside the field)", async () => {
    await expectText(byTest('group-egress-default'), 'default');
    await byTest('group-egress-edit-default').click();
    await byTest('egress-mode').locator('.ant-select-selector').click();
    await page.locator('.ant-select-dropdown:visible .ant-select-item-option').filter({ hasText: 'closed' }).click();
    await byTest('egress-allow').fill('10.0.0.0/33');
    await byTest('egress-save').click();
    // The shape passes the browser; the server refuses the prefix and says why.
    await expectText(byTest('egress-error'), 'prefix length must be 0 to 32');
    await byTest('egress-allow').fill('metadata.internal');
    await byTest('egress-save').click();
    await expectText(byTest('egress-error'), '"metadata.internal" is not an address');
    await byTest('egress-allow').fill('10.9.0.0/16:3128');
    await byTest('egress-save').click();
    await expectText(byTest('group-egress-default'), '10.9.0.0/16:3128');
    await expectText(byTest('group-egress-default'), 'closed');
    if (shots) await page.screenshot({ path: `${shots}/agents.png`, fullPage: true });
    // Back to the default one.
    await byTest('group-egress-edit-default').click();
    await byTest('egress-mode').locator('.ant-select-selector').click();
    await page.locator('.ant-select-dropdown:visible .ant-select-item-option').filter({ hasText: 'default' }).click();
    await byTest('egress-allow').fill('');
    await byTest('egress-save').click();
    await byTest('group-egress-edit-default').waitFor();
    await page.waitForFunction(() => !document.querySelector('[data-testid="group-egress-default"]')?.textContent?.includes('closed'));
  });

  await step('a superadmin drains an agent and undrains it', async () => {
    const row = byTest('agent-table').locator('.ant-table-row').first();
    await row.locator('[data-testid^="drain-"]').click();
    await expectText(row, 'drained');
    await row.locator('[data-testid^="undrain-"]').click();
    await row.locator('[data-testid^="drain-"]').waitFor();
  });

  await step('a superadmin makes a join token (an unknown group is refused beside the field) and revokes it', async () => {
    await byTest('token-group').fill('no-such-group');
    await byTest('token-create').click();
    await expectText(byTest('token-error'), 'no-such-group');
    await byTest('token-group').fill('');
    await byTest('token-create').click();
    await expectText(byTest('token-command'), 'baid agent --manager');
    const command = await byTest('token-command').innerText();
    const id = /--token bai1\.([^.]+)\./.exec(command)?.[1];
    if (!id) throw new Error(`no token in ${command}`);
    const row = byTest('token-table').locator('.ant-table-row').filter({ hasText: id });
    await expectText(row, 'valid');
    await byTest(`revoke-${id}`).click();
    await page.getByRole('button', { name: 'Revoke', exact: true }).last().click();
    await expectText(row, 'revoked');
    await byTest('logout').click();
    await byTest('login-submit').waitFor();
  });
}

await done();
