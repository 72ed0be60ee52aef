/**
 * The live page of `listen`, in Debian's headless Chromium driven by playwright-core: deliveries appear as
 * they arrive, newest first, and a click shows the payload and the validation issues. The test saves a
 * screenshot under test/cli/__screenshots__/ (ignored by git). Skipped only when no chromium binary exists.
 * playwright-core is installed by `npm run setup:browser` (.ci/run does): without it the suite fails in CI
 * and is skipped elsewhere with that command (test/support/tools.ts).
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importTool, requireTool, toolPath } from '../support/tools.js';
import { assertBuilt, Listener, runCli } from './run-cli.js';

type Playwright = typeof import('playwright-core');
type Browser = Awaited<ReturnType<Playwright['chromium']['launch']>>;
const playwright = await importTool<Playwright>('browser', 'playwright-core');

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
const SCREENSHOTS = fileURLToPath(new URL('./__screenshots__/', import.meta.url));

requireTool('browser', 'playwright-core', [toolPath('browser', 'playwright-core', 'package.json')]);

describe.skipIf(!CHROMIUM || !playwright)('listen live page (headless Chromium)', () => {
  let listener: Listener;
  let browser: Browser;

  beforeAll(async () => {
    assertBuilt();
    listener = await Listener.start();
    browser = await playwright!.chromium.launch({ executablePath: CHROMIUM, args: ['--headless=new', '--disable-gpu'] });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await listener?.stop();
  });

  it('lists deliveries newest first and shows payload and issues on click', async () => {
    // One delivery before the page opens (it comes from the history), the rest while it is open.
    expect((await runCli(['send', 'message_sent', '--url', listener.url])).code).toBe(0);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(listener.url);
    await page.locator('#deliveries li').first().waitFor();
    expect(await page.locator('#state').textContent()).toBe('live');

    expect((await runCli(['send', 'message_sent', '--url', listener.url, '--no-validate', '--set', 'data.message.sentAt=soon'])).code).toBe(0);
    expect((await runCli(['send', 'group_created', '--url', listener.url])).code).toBe(0);
    await page.waitForFunction(() => document.querySelectorAll('#deliveries li').length === 3);

    const items = page.locator('#deliveries li');
    expect(await items.evaluateAll((nodes: Element[]) => nodes.map((node) => (node as HTMLElement).dataset.seq))).toEqual(['3', '2', '1']);
    expect(await items.locator('.trigger').allTextContents()).toEqual(['group_created', 'message_sent', 'message_sent']);
    expect(await items.nth(1).locator('.verdict').textContent()).toBe('invalid');

    await items.nth(1).click();
    await expect.poll(() => page.locator('#issues').textContent()).toContain('data.message.sentAt');
    const payload = JSON.parse((await page.locator('#payload').textContent()) ?? '') as { data: { message: { sentAt: unknown } } };
    expect(payload.data.message.sentAt).toBe('soon');

    await items.nth(0).click();
    expect(await page.locator('#detail').textContent()).toContain('group_created · valid');
    expect(await page.locator('#issues').count()).toBe(0);
    expect(await page.locator('#payload').textContent()).toContain('"trigger": "group_created"');

    await items.nth(1).click();
    mkdirSync(SCREENSHOTS, { recursive: true });
    const file = `${SCREENSHOTS}live-page.png`;
    await page.screenshot({ path: file, fullPage: true });
    expect(statSync(file).size).toBeGreaterThan(10_000);
  }, 60_000);
});
