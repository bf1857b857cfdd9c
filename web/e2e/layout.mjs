// The web UI at 1280 × 800, the most common laptop screen: every page and tab, with real rows,
// as a user and as a superadmin, in Debian's chromium driven by playwright-core. On each view
// it fails on
//   - a page wider than the window (a horizontal scroll bar),
//   - a table wider than its place, or a column header past its right edge (a cut-off column),
//   - a cell whose content spills out of it (buttons pushed past the edge),
//   - a table row taller than two lines of text,
//   - a tag (a status such as RUNNING) broken over two lines,
//   - a status detail squeezed narrower than a few words.
//   BAI_URL, BAI_EMAIL, BAI_PASSWORD, BAI_ADMIN_EMAIL, BAI_ADMIN_PASSWORD   where and who
//   BAI_RUNNING, BAI_PENDING, BAI_ENDED   the user's sessions: running, pending with a reason, ended
//   BAI_MIG                               the name of a session the launcher starts on a MIG instance
//   BAI_LOST_AGENT                        an agent that is LOST (it had a warm pool)
//   BAI_AGENTS                            how many agents there are at least
//   CHROMIUM                              the browser (default /usr/bin/chromium)
//   SCREENSHOTS                           if set, a directory for a screenshot of every view
// Prints one line per step and "layout: N passed" at the end; exits non-zero on the first failure.
import { open } from './browser.mjs';

const env = (k) => {
  const v = process.env[k];
  if (!v) {
    console.error(`set ${k}`);
    process.exit(2);
  }
  return v;
};
const url = env('BAI_URL');
const running = env('BAI_RUNNING');
const pending = env('BAI_PENDING');
const ended = env('BAI_ENDED');
const mig = env('BAI_MIG');
const lostAgent = env('BAI_LOST_AGENT');
const agentCount = Number(env('BAI_AGENTS'));
const shots = process.env.SCREENSHOTS;

const WIDTH = 1280;
const HEIGHT = 800;
const { page, step, done } = await open('layout', { width: WIDTH, height: HEIGHT, fullPage: true });
const byTest = (id) => page.getByTestId(id);
const expectText = (locator, text) => locator.filter({ hasText: text }).first().waitFor();

/** What is wrong with the layout of the view shown now, in words (empty: nothing). */
function problems() {
  return page.evaluate(() => {
    const out = [];
    const visible = (el) => {
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden';
    };
    const text = (el) => (el.innerText || el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 60);
    const over = document.documentElement.scrollWidth - window.innerWidth;
    if (over > 0) out.push(`the page is ${over}px wider than the ${window.innerWidth}px window`);
    for (const table of document.querySelectorAll('.ant-table')) {
      if (!visible(table)) continue;
      const box = table.querySelector('.ant-table-content, .ant-table-body') || table;
      const right = Math.min(window.innerWidth, box.getBoundingClientRect().right);
      if (box.scrollWidth > box.clientWidth + 1) out.push(`a table is ${box.scrollWidth}px wide in ${box.clientWidth}px: its columns are cut off (${text(table.querySelector('thead') || table)})`);
      for (const th of table.querySelectorAll('thead th')) {
        if (th.getBoundingClientRect().right > right + 1) out.push(`the column "${text(th)}" is cut off at the right`);
      }
      for (const row of table.querySelectorAll('tr.ant-table-row')) {
        const td = row.querySelector('td');
        if (!td) continue;
        const cs = getComputedStyle(td);
        const line = cs.lineHeight === 'normal' ? parseFloat(cs.fontSize) * 1.5715 : parseFloat(cs.lineHeight);
        // Two lines of text and the cell's padding; a little more for a small button or tag
        // beside the text, never a third line.
        const limit = 2 * line + parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom) + 0.4 * line;
        const h = row.getBoundingClientRect().height;
        if (h > limit) out.push(`the row "${text(row)}" is ${Math.round(h)}px tall, more than two lines (${Math.round(limit)}px)`);
        for (const cell of row.querySelectorAll('td')) {
          // A cell cut with an ellipsis on purpose (its whole text in a tooltip) is fine.
          if (getComputedStyle(cell).textOverflow === 'ellipsis') continue;
          if (cell.scrollWidth > cell.clientWidth + 1) out.push(`the content of the cell "${text(cell)}" spills ${cell.scrollWidth - cell.clientWidth}px out of it`);
        }
      }
      for (const tag of table.querySelectorAll('.ant-tag')) {
        if (!visible(tag)) continue;
        const cs = getComputedStyle(tag);
        const lh = cs.lineHeight === 'normal' ? parseFloat(cs.fontSize) * 1.5715 : parseFloat(cs.lineHeight);
        const inner = tag.getBoundingClientRect().height - parseFloat(cs.borderTopWidth) - parseFloat(cs.borderBottomWidth) - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom);
        if (inner > 1.5 * lh) out.push(`the tag "${text(tag)}" is broken over lines`);
      }
    }
    for (const info of document.querySelectorAll('[data-testid^="status-info-"]')) {
      if (visible(info) && info.getBoundingClientRect().width < 120) out.push(`the status detail "${text(info)}" is squeezed to ${Math.round(info.getBoundingClientRect().width)}px`);
    }
    return out;
  });
}

/** Fails with every layout problem of the view shown now; takes its screenshot first. */
async function checkView(label) {
  if (shots) await page.screenshot({ path: `${shots}/layout-${label}.png`, fullPage: true });
  const found = await problems();
  if (found.length) throw new Error(`${label} at ${WIDTH}×${HEIGHT}:\n  ${[...new Set(found)].join('\n  ')}`);
}

async function login(email, password) {
  await page.goto(url);
  await byTest('login-email').fill(email);
  await byTest('login-password').fill(password);
  await byTest('login-submit').click();
  await expectText(byTest('whoami'), email);
  const w = page.viewportSize();
  if (w.width !== WIDTH || w.height !== HEIGHT) throw new Error(`the window is ${JSON.stringify(w)}`);
}

async function openPage(name) {
  await page.getByRole('menuitem', { name }).click();
  await expectText(byTest('sidebar').locator('.ant-menu-item-selected'), name);
}

/** The Sessions page's tabs, each with the rows it must show, checked at 1280 × 800. */
async function sessionTabs(who) {
  await openPage('Sessions');
  await byTest('tab-running').click();
  await expectText(byTest(`status-${running}`), 'RUNNING');
  await checkView(`${who}-sessions-running`);
  await byTest('tab-pending').click();
  await expectText(byTest(`status-${pending}`), 'PENDING');
  await checkView(`${who}-sessions-pending`);
  await byTest('tab-finished').click();
  await expectText(byTest(`status-${ended}`), 'TERMINATED');
  await checkView(`${who}-sessions-finished`);
  await byTest('tab-system').click();
  await page.locator('[data-testid="session-table"] .ant-spin-spinning').waitFor({ state: 'detached' });
  await checkView(`${who}-sessions-system`);
}

await step('log in as the user at 1280 × 800', async () => {
  await login(env('BAI_EMAIL'), env('BAI_PASSWORD'));
});

await step("the Sessions page's tabs fit, with a running, a pending and an ended session", sessionTabs.bind(null, 'user'));

await step('a pending session says why beside its status; an ended one its cause and the resources it had', async () => {
  await byTest('tab-pending').click();
  await expectText(byTest(`status-info-${pending}`), 'short on');
  await expectText(byTest(`resources-${pending}`), 'CPU');
  // The whole detail is at hand in the tooltip where the cell cuts it.
  const title = await byTest(`status-info-${pending}`).getAttribute('title');
  if (!title?.includes('short on')) throw new Error(`the detail's tooltip is ${JSON.stringify(title)}`);
  await byTest('tab-finished').click();
  await expectText(byTest(`status-info-${ended}`), 'user-requested');
  const had = (await byTest(`resources-${ended}`).innerText()).trim();
  if (!/CPU/.test(had) || !/(MiB|GiB)/.test(had)) throw new Error(`the ended session shows resources ${JSON.stringify(had)}`);
});

await step("the launcher's pages fit", async () => {
  await openPage('Sessions');
  await byTest('start').click();
  await byTest('session-name').waitFor();
  for (let i = 0; await byTest('next').count(); i++) {
    await checkView(`user-launcher-${i}`);
    await byTest('next').click();
  }
  await byTest('launch').waitFor();
  await checkView('user-launcher-review');
  await page.getByRole('button', { name: 'Cancel' }).click();
  await byTest('tab-running').waitFor();
});

// The group has two kinds of GPU (the Docker agent's mock fGPU, the dummy agents' MIG
// instances): the launcher asks which, a kernel takes one kind, and the launch asks for the
// kind chosen.
await step('the launcher offers each kind of GPU of the group and launches the one chosen', async () => {
  await byTest('start').click();
  await byTest('session-name').fill(mig);
  await byTest('next').click();
  const kind = byTest('res-accelerator-kind');
  await kind.click();
  const options = page.locator('.ant-select-dropdown:visible .ant-select-item-option');
  await options.filter({ hasText: 'fGPU' }).first().waitFor();
  await options.filter({ hasText: 'MIG 1g.18gb' }).first().click();
  await page.getByText('AI accelerator (MIG 1g.18gb)').first().waitFor();
  const acc = byTest('res-accelerator');
  const accInput = (await acc.evaluate((e) => e.tagName)) === 'INPUT' ? acc : acc.locator('input');
  await accInput.fill('1');
  await accInput.blur();
  await checkView('user-launcher-gpu-kind');
  await byTest('skip-to-review').click();
  await expectText(page.locator('.ant-card'), '1 MIG 1g.18gb');
  await byTest('launch').click();
  // No folder is mounted: the launcher asks first.
  await page.locator('.ant-modal').filter({ hasText: 'No folders are mounted' }).getByRole('button', { name: 'Start' }).click();
  await byTest('tab-running').waitFor();
  await expectText(byTest(`status-${mig}`), 'RUNNING');
  await expectText(byTest(`resources-${mig}`), 'MIG 1g.18gb');
});

for (const [name, ready] of [
  ['Data', 'data-create'],
  ['Serving', 'service-create'],
  ['My Environments', 'myenv-count'],
  ['Settings', 'settings-dotfiles'],
]) {
  await step(`the ${name} page fits`, async () => {
    await openPage(name);
    await byTest(ready).waitFor();
    await page.locator('.ant-spin-spinning').first().waitFor({ state: 'detached' });
    await checkView(`user-${name.toLowerCase().replace(/ /g, '-')}`);
  });
}

await step('log out; log in as the superadmin', async () => {
  await byTest('logout').click();
  await byTest('login-submit').waitFor();
  await login(env('BAI_ADMIN_EMAIL'), env('BAI_ADMIN_PASSWORD'));
});

await step("the superadmin's Sessions tabs fit, with the Owner column", sessionTabs.bind(null, 'admin'));

await step('the Agents page fits with all the agents, and shows no ready pool of a lost agent', async () => {
  await openPage('Agents');
  const rows = byTest('agent-table').locator('.ant-table-row');
  await rows.nth(agentCount - 1).waitFor();
  // LOST, or GONE once away long enough.
  await expectText(byTest(`agent-status-${lostAgent}`), /lost|gone/);
  await byTest('group-egress-default').waitFor();
  // The group's preemption setting and its fair-share tree are on the page and fit too.
  await expectText(byTest('group-preemption-default'), 'off');
  await byTest('fairshare-default').waitFor();
  await checkView('admin-agents');
  // An alive agent's pool is ready; the lost one's is not shown as ready (not known).
  await expectText(byTest('agent-table').locator('[data-testid^="agent-warm-pool-"]'), 'ready');
  const lostRow = rows.filter({ has: byTest(`agent-status-${lostAgent}`) });
  const lostText = await lostRow.innerText();
  if (/\bready\b/.test(lostText)) throw new Error(`the lost agent's row shows a ready pool: ${lostText.replace(/\s+/g, ' ')}`);
});

await step('the Audit log page fits', async () => {
  await openPage('Audit log');
  await byTest('audit-table').locator('.ant-table-row').first().waitFor();
  await checkView('admin-audit');
});

await done();
