/**
 * The `chat-webhooks` and `chat-webhooks/fetch` entries bundle for a browser-like runtime (esbuild, platform
 * neutral, conditions worker + browser, as Cloudflare's and browsers' bundlers resolve them): #platform
 * resolves to web.ts, no `node:` import and no Buffer remain, and the bundle answers deliveries with
 * Buffer, process and require out of reach.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const entries = { 'chat-webhooks': './dist/src/index.js', 'chat-webhooks/fetch': './dist/adapters/fetch/index.js' };

async function bundle(contents: string, format: 'esm' | 'iife') {
  const result = await build({
    stdin: { contents, resolveDir: root, loader: 'js' },
    bundle: true,
    write: false,
    metafile: true,
    format,
    platform: 'neutral',
    conditions: ['worker', 'browser'],
    mainFields: ['module', 'main'],
    logLevel: 'silent',
  });
  return { text: result.outputFiles[0]?.text ?? '', metafile: result.metafile as Metafile };
}

describe('a browser-like bundle', () => {
  beforeAll(() => {
    // CI builds before testing; a local `npm test` on a fresh clone builds here.
    if (!existsSync(`${root}dist/src/index.js`)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
  }, 120_000);

  it.each(Object.entries(entries))('of %s has no node: import and no Buffer', async (name, path) => {
    const { text, metafile } = await bundle(`export * from ${JSON.stringify(path)};`, 'esm');
    const inputs = Object.keys(metafile.inputs);
    const imports = Object.values(metafile.inputs).flatMap((input) => input.imports.map((entry) => entry.path));
    expect(imports.filter((specifier) => specifier.startsWith('node:'))).toEqual([]);
    expect(inputs).not.toContain('dist/src/platform/node.js');
    // The fetch entry imports only types from the core: its bundle holds no platform code at all.
    if (name === 'chat-webhooks') expect(inputs).toEqual(expect.arrayContaining(['dist/src/platform/web.js', 'dist/src/platform/sha.js']));
    expect(text).not.toMatch(/["'`]node:[a-z]/);
    expect(text).not.toMatch(/\bBuffer\b/);
    expect(text).not.toMatch(/\brequire\(/);
  });

  it('answers deliveries with Buffer, process and require out of reach', async () => {
    const { text, metafile } = await bundle(
      `import { createWebhooks, idempotencyKey, memoryInbox } from ${JSON.stringify(entries['chat-webhooks'])};
       import { fetchHandler } from ${JSON.stringify(entries['chat-webhooks/fetch'])};
       globalThis.__bundled = { createWebhooks, fetchHandler, idempotencyKey, memoryInbox };`,
      'iife',
    );
    expect(Object.keys(metafile.inputs)).toContain('dist/src/platform/web.js');
    type Bundled = Record<'createWebhooks' | 'fetchHandler' | 'idempotencyKey' | 'memoryInbox', Function>;
    const holder: { __bundled?: Bundled } = {};
    // Parameters shadow the globals, so any use of them inside the bundle would read undefined.
    new Function('globalThis', 'Buffer', 'process', 'require', 'module', text)(holder, undefined, undefined, undefined, undefined);
    const { createWebhooks, fetchHandler, idempotencyKey, memoryInbox } = holder.__bundled!;

    const webhooks = createWebhooks({ auth: { username: 'platform', password: 'pä:ss wörd' }, inbox: memoryInbox() });
    const received: unknown[] = [];
    const errors: unknown[] = [];
    webhooks.on('message_sent', (event: unknown) => void received.push(event));
    webhooks.onError((error: unknown) => void errors.push(error));
    const handler = fetchHandler(webhooks, { awaitHandlers: true });
    const body = readFileSync(`${root}fixtures/message_sent.json`, 'utf8');
    const send = (authorization: string) =>
      handler(new Request('https://example.test/webhooks', { method: 'POST', headers: { 'content-type': 'application/json', authorization }, body }));

    const good = `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode('platform:pä:ss wörd')))}`;
    const accepted = await send(good);
    expect([accepted.status, await accepted.text()]).toEqual([200, 'OK']);
    const repeat = await send(good);
    expect(repeat.status).toBe(200);
    await webhooks.close({ timeoutMs: 1000 }).catch(() => undefined);
    expect(errors).toEqual([]);
    expect(received).toHaveLength(1);

    const again = createWebhooks({ auth: { username: 'platform', password: 'pä:ss wörd' } }).onError(() => undefined);
    const refused = await fetchHandler(again)(
      new Request('https://example.test/webhooks', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Basic ${btoa('platform:wrong')}` }, body }),
    );
    expect(refused.status).toBe(401);

    // The body digest of an event without documented key fields: web's SHA-256 against node's.
    const unknown = { trigger: 'poll_closed', data: { text: 'é😀' } };
    const raw = JSON.stringify(unknown);
    const { idempotencyKey: nodeKey } = await import('../../src/index.js');
    expect(idempotencyKey(unknown, raw)).toBe(nodeKey(unknown as never, raw));
    expect(idempotencyKey(unknown, raw)).toMatch(/#[A-Za-z0-9+/]{43}=$/);
  });
});
