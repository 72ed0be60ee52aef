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
      `import { createWebhooks } from ${JSON.stringify(entries['chat-webhooks'])};
       import { fetchHandler } from ${JSON.stringify(entries['chat-webhooks/fetch'])};
       globalThis.__bundled = { createWebhooks, fetchHandler };`,
      'iife',
    );
    expect(Object.keys(metafile.inputs)).toContain('dist/src/platform/web.js');
    const holder: { __bundled?: { createWebhooks: Function; fetchHandler: Function } } = {};
    // Parameters shadow the globals, so any use of them inside the bundle would read undefined.
    new Function('globalThis', 'Buffer', 'process', 'require', 'module', text)(holder, undefined, undefined, undefined, undefined);
    const { createWebhooks, fetchHandler } = holder.__bundled!;

    const keys: string[] = [];
    const webhooks = createWebhooks({
      auth: { username: 'platform', password: 'pä:ss wörd' },
      inbox: { put: async (entry: { key: string }) => void keys.push(entry.key) },
    });
    const received: unknown[] = [];
    webhooks.on('message_sent', (event: unknown) => void received.push(event));
    const handler = fetchHandler(webhooks, { awaitHandlers: true });
    const errors: unknown[] = [];
    webhooks.onError((error: unknown) => void errors.push(error));
    const body = readFileSync(`${root}fixtures/message_sent.json`, 'utf8');
    const send = (authorization: string) =>
      handler(new Request('https://example.test/webhooks', { method: 'POST', headers: { 'content-type': 'application/json', authorization }, body }));

    const good = `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode('platform:pä:ss wörd')))}`;
    const accepted = await send(good);
    expect([accepted.status, await accepted.text()]).toEqual([200, 'OK']);
    expect(errors).toEqual([]);
    expect(received).toHaveLength(1);
    const { createHash } = await import('node:crypto');
    expect(keys).toEqual([`message_sent:${createHash('sha1').update(body).digest('base64')}`]);

    const refused = await send(`Basic ${btoa('platform:wrong')}`);
    expect(refused.status).toBe(401);
    const repeat = await send(good);
    expect(repeat.status).toBe(200);
    expect(received).toHaveLength(1);
  });
});
