/**
 * The live page of `listen` as a request inspector, in Debian's headless Chromium driven by playwright-core,
 * against the built CLI (with credentials and `--forward`) and a plain node:http server standing for the
 * developer's app. Every command the page offers to copy is run for real (`sh`), and has to reach `listen`.
 * The screenshots at 1280 and 600 px are kept in test/cli/__screenshots__/ (committed, so a change to the page's
 * look shows in review); the others go to a temporary folder (the paths are printed). Skipped only when no
 * chromium binary exists. playwright-core is installed by `npm run setup:browser` (.ci/run does): without it
 * the suite fails in CI and is skipped elsewhere, naming that command (test/support/tools.ts).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importTool, requireTool, toolPath } from '../support/tools.js';
import { assertBuilt, CLI, Listener, runCli, type ListenRecord } from './run-cli.js';
import { startDeveloperApp, type DeveloperApp } from '../support/developer-app.js';

// playwright-core lives in tools/browser/ (its types through tsconfig.json "paths"), loaded only when installed.
type Playwright = typeof import('playwright-core');
type Browser = Awaited<ReturnType<Playwright['chromium']['launch']>>;
type BrowserContext = Awaited<ReturnType<Browser['newContext']>>;
type Page = Awaited<ReturnType<BrowserContext['newPage']>>;
const playwright = await importTool<Playwright>('browser', 'playwright-core');
requireTool('browser', 'playwright-core', [toolPath('browser', 'playwright-core', 'package.json')]);

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
const SCREENSHOTS = fileURLToPath(new URL('./__screenshots__/', import.meta.url));
const AUTH = ['--user', 'app', '--password', 'pw'];
const work = mkdtempSync(join(tmpdir(), 'chat-webhooks-live-page-'));

/** Runs a copied command line in `sh`, the CLI's `npx chat-webhooks` being the built one. */
function shell(commandLine: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = commandLine.replaceAll('npx chat-webhooks', `'${process.execPath}' '${CLI}'`);
  return new Promise((resolve) => {
    execFile('sh', ['-c', script], { cwd: work, env: { ...process.env, CHAT_WEBHOOKS_PASSWORD: 'pw' } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe.skipIf(!CHROMIUM || !playwright)('listen live page (headless Chromium)', () => {
  let listener: Listener;
  let app: DeveloperApp;
  let browser: Browser;
  let context: BrowserContext;
  const problems: string[] = [];

  async function send(args: string[], count = 1): Promise<ListenRecord[]> {
    const before = listener.records.length;
    const result = await runCli(['send', ...args, '--url', `${listener.url}webhooks`, ...AUTH]);
    expect(result.code, result.stderr).toBe(0);
    return (await listener.waitFor(before + count)).slice(before);
  }

  async function openPage(width = 1280, height = 800): Promise<Page> {
    const page = await context.newPage();
    await page.setViewportSize({ width, height });
    page.on('console', (message) => {
      // A refused connection (the test that cuts the feed) is logged too; what matters is what CSP refused.
      if (message.type() === 'error' && /Content Security Policy|^Refused to /.test(message.text())) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(String(error)));
    return page;
  }

  async function shot(page: Page, name: string, kept = false): Promise<void> {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const file = kept ? `${SCREENSHOTS}${name}.png` : join(work, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    expect(statSync(file).size).toBeGreaterThan(5_000);
    console.log(`screenshot: ${file}`);
  }

  /** Clicks a copy button and returns what reached the clipboard. */
  async function copied(page: Page, action: string): Promise<string> {
    await page.evaluate(() => navigator.clipboard.writeText(''));
    await page.locator(`#action-${action}`).click();
    await expect.poll(() => page.locator('#notice').textContent()).toMatch(/^Copied/);
    return page.evaluate(() => navigator.clipboard.readText());
  }

  beforeAll(async () => {
    assertBuilt();
    app = await startDeveloperApp();
    listener = await Listener.start([...AUTH, '--forward', app.url]);
    browser = await playwright!.chromium.launch({ executablePath: CHROMIUM, args: ['--headless=new', '--disable-gpu'] });
    context = await browser.newContext({ acceptDownloads: true });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: listener.url.slice(0, -1) });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await listener?.stop();
    app?.server.close();
    // Nothing the page did was refused by its Content-Security-Policy, and no script failed.
    expect(problems).toEqual([]);
  });

  it('empty: says how to send one, with the credentials flags listen requires, and that command works', async () => {
    const page = await openPage();
    await page.goto(listener.url);
    const hint = await page.locator('#hint').textContent();
    expect(hint).toBe(`npx chat-webhooks send message_sent --url ${listener.url} --user app --password "$CHAT_WEBHOOKS_PASSWORD"`);
    const before = listener.records.length;
    expect((await shell(hint ?? '')).code).toBe(0);
    expect((await listener.waitFor(before + 1))[before]).toMatchObject({ status: 200, trigger: 'message_sent' });
    await page.locator('#deliveries li').first().waitFor();
    await shot(page, 'live-page-first-delivery');
    await page.close();
  });

  it('shows earlier deliveries with the page itself, before (and without) the live feed', async () => {
    const page = await openPage();
    await page.route('**/events*', (route) => route.abort());
    await page.goto(listener.url);
    expect(await page.locator('#deliveries li').count()).toBe(listener.records.length);
    expect(await page.locator('#state').textContent()).not.toBe('live');
    await page.close();
  });

  it('lists deliveries newest first; a click shows issues, masked headers and the payload', async () => {
    const page = await openPage();
    await page.goto(listener.url);
    await expect.poll(() => page.locator('#state').textContent()).toBe('live');
    await send(['message_sent', '--no-validate', '--set', 'data.message.sentAt=soon']);
    await send(['group_created']);
    await page.waitForFunction((count: number) => document.querySelectorAll('#deliveries li').length === count, listener.records.length);
    const items = page.locator('#deliveries li');
    expect(await items.locator('.trigger').allTextContents()).toEqual(['group_created', 'message_sent', 'message_sent']);
    expect(await items.nth(1).locator('.verdict').textContent()).toBe('invalid');

    await items.nth(1).click();
    await expect.poll(() => page.locator('#issues').textContent()).toContain('data.message.sentAt');
    const payload = JSON.parse((await page.locator('#payload').textContent()) ?? '') as { data: { message: { sentAt: unknown } } };
    expect(payload.data.message.sentAt).toBe('soon');
    const headers = await page.locator('#headers').textContent();
    expect(headers).toContain('authorizationBasic ••••••');
    expect(headers).toContain('content-typeApplication/json');
    expect(await page.content()).not.toContain(Buffer.from('app:pw').toString('base64'));
    await shot(page, 'live-page-detail');

    await items.nth(0).click();
    expect(await page.locator('#detail').textContent()).toContain('group_created · valid');
    expect(await page.locator('#issues').count()).toBe(0);
    await page.close();
  });

  it('filters by trigger and by status, and searches in payloads', async () => {
    await send(['user_blocked']);
    const page = await openPage();
    await page.goto(listener.url);
    const visible = () => page.locator('#deliveries li:not([hidden]) .trigger').allTextContents();
    await page.selectOption('#filter-trigger', 'message_sent');
    expect(await visible()).toEqual(['message_sent', 'message_sent']);
    await page.selectOption('#filter-status', 'invalid');
    expect(await visible()).toEqual(['message_sent']);
    expect(await page.locator('#count').textContent()).toBe(`1 of ${listener.records.length} shown`);
    await page.selectOption('#filter-trigger', '');
    await page.selectOption('#filter-status', '2xx');
    expect((await visible()).length).toBe(listener.records.length);

    // A value that is only in one payload: the group's guid.
    const group = JSON.parse(listener.records.find((record) => record.trigger === 'group_created')?.rawBody ?? '') as { data: { group: { guid: string } } };
    await page.fill('#search', group.data.group.guid.toUpperCase());
    expect(await visible()).toEqual(['group_created']);
    await page.fill('#search', 'no such text anywhere');
    expect(await visible()).toEqual([]);
    await page.fill('#search', '');
    expect((await visible()).length).toBe(listener.records.length);
    await page.close();
  });

  it('copy payload, copy as curl, copy as `send --file`: each command, run, delivers the same body again', async () => {
    const [record] = await send(['message_reaction_added']);
    const page = await openPage();
    await page.goto(listener.url);
    await page.locator(`#deliveries li[data-seq="${record?.seq}"]`).click();

    expect(JSON.parse(await copied(page, 'copy-payload'))).toEqual(JSON.parse(record?.rawBody ?? ''));

    const curl = await copied(page, 'copy-curl');
    expect(curl).toMatch(
      /^printf '%s' '.+' \| curl --globoff -X POST http:\/\/127\.0\.0\.1:\d+\/webhooks -H 'Content-Type: Application\/json' -u app:"\$CHAT_WEBHOOKS_PASSWORD" --data-binary @-$/s,
    );
    let before = listener.records.length;
    expect((await shell(`${curl} --silent --fail`)).code).toBe(0);
    const byCurl = (await listener.waitFor(before + 1))[before];
    expect(byCurl).toMatchObject({ status: 200, rawBody: record?.rawBody, duplicate: true });

    const sendFile = await copied(page, 'copy-send');
    expect(sendFile).toContain(`npx chat-webhooks send --file delivery-${record?.seq}.json --url ${listener.url}webhooks --user app --password "$CHAT_WEBHOOKS_PASSWORD"`);
    before = listener.records.length;
    const sent = await shell(sendFile);
    expect(sent.code, sent.stderr).toBe(0);
    expect(readFileSync(join(work, `delivery-${record?.seq}.json`), 'utf8')).toBe(record?.rawBody);
    expect((await listener.waitFor(before + 1))[before]).toMatchObject({ status: 200, rawBody: record?.rawBody });
    await page.close();
  });

  it('resends a delivery to the --forward target', async () => {
    const [record] = await send(['group_member_joined']);
    const page = await openPage();
    await page.goto(listener.url);
    await page.locator(`#deliveries li[data-seq="${record?.seq}"]`).click();
    const forwardedBefore = app.received.length;
    await page.locator('#action-resend').click();
    await expect.poll(() => page.locator('#notice').textContent()).toMatch(new RegExp(`^Resent #${record?.seq} to ${app.url}: 204`));
    expect(app.received.slice(forwardedBefore).map((request) => request.body)).toEqual([record?.rawBody]);
    await page.close();
  });

  it('pause holds new deliveries back, clear empties the page, download gives NDJSON that replay reads', async () => {
    const page = await openPage();
    await page.goto(listener.url);
    await expect.poll(() => page.locator('#state').textContent()).toBe('live');
    const shown = await page.locator('#deliveries li').count();
    await page.locator('#pause').click();
    expect(await page.locator('#pause').getAttribute('aria-pressed')).toBe('true');
    const [held] = await send(['user_unblocked']);
    await expect.poll(() => page.locator('#pause').textContent()).toBe('Resume (1 new)');
    expect(await page.locator('#deliveries li').count()).toBe(shown);
    await page.locator('#pause').click();
    expect(await page.locator('#deliveries li').first().getAttribute('data-seq')).toBe(String(held?.seq));

    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#download').click()]);
    const file = join(work, 'capture.ndjson');
    await download.saveAs(file);
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as ListenRecord);
    expect(lines.map((line) => line.seq)).toEqual(listener.records.map((record) => record.seq));
    expect(lines.map((line) => line.rawBody)).toEqual(listener.records.map((record) => record.rawBody));
    const target = await startDeveloperApp();
    try {
      const replayed = await runCli(['replay', file, '--url', target.url]);
      expect(replayed.code).toBe(0);
      expect(target.received.map((request) => request.body)).toEqual(listener.records.map((record) => record.rawBody));
    } finally {
      await target.close();
    }

    await page.locator('#clear').click();
    expect(await page.locator('#deliveries li').count()).toBe(0);
    const [next] = await send(['user_blocked']);
    await expect.poll(() => page.locator('#deliveries li').count()).toBe(1);
    expect(await page.locator('#deliveries li').first().getAttribute('data-seq')).toBe(String(next?.seq));
    await page.close();
  });

  it('long ids wrap instead of spilling; under 700 px the page is one column', async () => {
    const long = `msg-${'0123456789abcdef'.repeat(20)}`;
    await send(['message_sent', '--set', `data.message.id=${long}`]);
    for (const width of [1280, 600]) {
      const page = await openPage(width, 900);
      await page.goto(listener.url);
      await page.locator('#deliveries li').first().click();
      const spill = await page.evaluate(() => {
        const root = document.documentElement;
        const inner = Array.from(document.querySelectorAll('#deliveries li, #detail .facts, #detail .payload, #detail .j-row'));
        return { page: root.scrollWidth - root.clientWidth, elements: inner.filter((node) => node.scrollWidth > node.clientWidth + 1).length };
      });
      expect(spill).toEqual({ page: 0, elements: 0 });
      // The long id is one string, wrapped inside the payload's column: several lines high, no wider than it.
      const id = page.locator('#payload .j-str', { hasText: long }).first();
      const [idBox, payloadBox] = [await id.boundingBox(), await page.locator('#payload').boundingBox()];
      expect(idBox!.height).toBeGreaterThan(30);
      expect(idBox!.x + idBox!.width).toBeLessThanOrEqual(payloadBox!.x + payloadBox!.width + 1);
      const list = await page.locator('main').boundingBox();
      const detail = await page.locator('#detail').boundingBox();
      if (width < 700) {
        expect(detail?.x).toBe(list?.x);
        expect(detail?.y ?? 0).toBeGreaterThanOrEqual((list?.y ?? 0) + (list?.height ?? 0) - 1);
      } else {
        expect(detail?.x ?? 0).toBeGreaterThan((list?.x ?? 0) + 300);
      }
      await shot(page, `live-page-${width}px`, true);
      await page.close();
    }
  });

  it('the payload is highlighted JSON that folds; the detail pane follows the filters and the search', async () => {
    const [record] = await send(['group_member_joined']);
    await send(['message_deleted']);
    const page = await openPage();
    await page.goto(listener.url);
    await page.locator(`#deliveries li[data-seq="${record?.seq}"]`).click();
    const payload = page.locator('#payload');
    // Its text is the JSON (fold marks are CSS), each kind of value in its own colour.
    expect(JSON.parse((await payload.textContent()) ?? '')).toEqual(JSON.parse(record?.rawBody ?? ''));
    expect(await payload.locator('.j-key').first().textContent()).toBe('"trigger"');
    expect(await payload.locator('.j-str').first().textContent()).toBe('"group_member_joined"');
    const colours = await page.evaluate(() => ['j-key', 'j-str', 'j-num'].map((kind) => getComputedStyle(document.querySelector(`#payload .${kind}`)!).color));
    expect(new Set(colours).size).toBe(3);
    const data = payload.locator('.j-value').nth(1);
    const toggle = data.locator('> .j-toggle');
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(await data.locator('> .j-items').isVisible()).toBe(false);
    const folded = await toggle.evaluate((node) => getComputedStyle(node, '::after').content);
    expect(folded).toMatch(/^" \d+ keys "$/);
    // Folded, it reads as one line: the key, the brackets around the count, the comma after.
    expect(await data.evaluate((node) => node.getClientRects().length)).toBe(1);
    expect(JSON.parse((await payload.textContent()) ?? '')).toEqual(JSON.parse(record?.rawBody ?? ''));
    await toggle.press('Enter');
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    expect(await data.locator('> .j-items').isVisible()).toBe(true);

    // A search that hides the selected delivery moves the pane to the first one shown; none shown, it says so.
    await page.fill('#search', 'message_deleted');
    const first = await page.locator('#deliveries li:not([hidden])').first().getAttribute('data-seq');
    await expect.poll(() => page.locator('#detail').getAttribute('data-seq')).toBe(first);
    expect(await page.locator('#detail .detail-title').textContent()).toContain('message_deleted');
    await page.fill('#search', 'no such text anywhere');
    expect(await page.locator('#detail').textContent()).toBe('No delivery matches the filters and the search.');
    await page.fill('#search', '');
    await page.close();
  });

  it('a notice goes after a few seconds; the page has its own icon, allowed by its policy', async () => {
    const page = await openPage();
    await page.goto(listener.url);
    await page.locator('#deliveries li').first().click();
    await page.locator('#action-copy-payload').click();
    await expect.poll(() => page.locator('#notice').textContent()).toMatch(/^Copied/);
    await expect.poll(() => page.locator('#notice').textContent(), { timeout: 8_000 }).toBe('');
    const icon = await page.locator('link[rel="icon"]').getAttribute('href');
    expect(icon).toMatch(/^data:image\/svg\+xml,/);
    // Drawn by the page itself: the image decodes, to its 32 × 32 view box.
    const size = await page.evaluate(async (href) => {
      const image = new Image();
      image.src = href;
      await image.decode();
      return [image.naturalWidth, image.naturalHeight];
    }, icon!);
    expect(size).toEqual([32, 32]);
    await page.close();
  });

  it('works from the keyboard alone: Tab reaches the filters, the search, a delivery and the copy buttons', async () => {
    const page = await openPage();
    await page.goto(listener.url);
    const focused = () => page.evaluate(() => document.activeElement?.id || `seq ${(document.activeElement as HTMLElement | null)?.dataset.seq}`);
    const order: string[] = [];
    for (let i = 0; i < 7; i++) {
      await page.keyboard.press('Tab');
      order.push(await focused());
    }
    const newest = String(listener.records.at(-1)?.seq);
    expect(order).toEqual(['filter-trigger', 'filter-status', 'search', 'pause', 'clear', 'download', `seq ${newest}`]);

    // Back to the search, type, and the list follows.
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('search');
    await page.keyboard.type('user_blocked');
    await expect.poll(() => page.locator('#deliveries li:not([hidden]) .trigger').allTextContents()).toEqual(['user_blocked', 'user_blocked']);
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('filter-status');
    await page.keyboard.press('ArrowDown');
    expect(await page.locator('#filter-status').inputValue()).toBe('2xx');

    // To the first delivery shown, Enter opens it and moves to its title; Tab goes on to the copy buttons.
    for (let i = 0; i < 5; i++) await page.keyboard.press('Tab');
    expect(await focused()).toMatch(/^seq \d+$/);
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.className)).toBe('detail-title');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('action-copy-payload');
    await page.evaluate(() => navigator.clipboard.writeText(''));
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toContain('"trigger": "user_blocked"');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('action-copy-curl');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toMatch(/^printf '%s' .+ \| curl --globoff -X POST /s);
    await shot(page, 'live-page-keyboard');
    await page.close();
  });

  it('a page open across a restart of listen starts over with the new run', async () => {
    await send(['group_created']);
    const page = await openPage();
    await page.goto(listener.url);
    await expect.poll(() => page.locator('#state').textContent()).toBe('live');
    expect(await page.locator('#deliveries li').count()).toBeGreaterThan(0);
    const { port } = listener;
    expect(await listener.stop()).toBe(0);
    await expect.poll(() => page.locator('#state').textContent()).toBe('reconnecting…');
    listener = await Listener.start([...AUTH, '--forward', app.url, '--port', String(port)]);
    // The new run numbers from 1 again: the page reloads rather than mix the two runs.
    await expect.poll(() => page.locator('#state').textContent(), { timeout: 10_000 }).toBe('live');
    await expect.poll(() => page.locator('#deliveries li').count()).toBe(0);
    const [first] = await send(['user_blocked']);
    expect(first?.seq).toBe(1);
    await expect.poll(() => page.locator('#deliveries li').count()).toBe(1);
    await page.close();
  });
});
