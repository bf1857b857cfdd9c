// The OpenID Connect login in a real browser (Debian's chromium, playwright-core): bai's login
// page → "Log in with …" → the provider's own login form and consent page → back in bai,
// logged in; then logout, where the login page offers the provider's logout.
//   BAI_URL                 bai (its web UI built, a provider configured with --oidc-*)
//   OIDC_NAME, OIDC_USER    the button's name, the provider's login name to type
//   BAI_EMAIL               the email bai shows once logged in
//   CHROMIUM, SCREENSHOTS   as in run.mjs
// Prints one line per step and "oidc: N passed" at the end; exits non-zero on the first failure.
import { open } from './browser.mjs';

const { BAI_URL: url, OIDC_NAME: name, OIDC_USER: user, BAI_EMAIL: email } = process.env;
if (!url || !name || !user || !email) {
  console.error('set BAI_URL, OIDC_NAME, OIDC_USER and BAI_EMAIL');
  process.exit(2);
}
const shots = process.env.SCREENSHOTS;

const { page, step, done } = await open('oidc');

await step('the login page offers the provider', async () => {
  await page.goto(url);
  const button = page.getByTestId('login-oidc');
  await button.waitFor();
  const text = await button.innerText();
  if (!text.includes(`Log in with ${name}`)) throw new Error(`the button says ${JSON.stringify(text)}`);
  await button.click();
});

await step("the provider's login form", async () => {
  await page.locator('input[name="login"]').waitFor();
  if (!page.url().includes('/interaction/')) throw new Error(`not the provider's page: ${page.url()}`);
  await page.locator('input[name="login"]').fill(user);
  await page.locator('input[name="password"]').fill('any password');
  await page.locator('button[type="submit"]').click();
});

await step("the provider's consent", async () => {
  await page.getByRole('button', { name: 'Continue' }).click();
});

await step('back in bai, logged in', async () => {
  await page.getByText(email).first().waitFor();
  if (!page.url().startsWith(url)) throw new Error(`not back at bai: ${page.url()}`);
  if (shots) await page.screenshot({ path: `${shots}/oidc-logged-in.png` });
});

await step("logout, and the provider's logout offered", async () => {
  await page.getByTestId('logout').click();
  await page.getByTestId('login-oidc').waitFor();
  await page.getByTestId('logout-oidc').waitFor();
});

await done();
