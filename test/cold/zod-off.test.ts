/**
 * zod off the receive path (issue 37, item 2), in fresh processes on the built package: importing the receiving
 * entries and answering a valid delivery loads no zod (zod's core marks globalThis as it loads, however it is
 * loaded) and no commander; the first invalid payload loads zod once and onError gets the issues zod's
 * explanation gives (paths and messages), as before the validators were generated.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Runs an ES module script in a fresh node from the package's root (so `chat-webhooks` is the package itself). */
function run(script: string, flags: string[] = []): Record<string, unknown> {
  const out = execFileSync(process.execPath, [...flags, '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1) as string) as Record<string, unknown>;
}

const receiver = `
  import { readFileSync } from 'node:fs';
  import { createRequire } from 'node:module';
  import { createWebhooks } from 'chat-webhooks';
  import { lambdaHandler } from 'chat-webhooks/lambda';
  import { fetchHandler } from 'chat-webhooks/fetch';
  import { expressMiddleware } from 'chat-webhooks/express';
  import { fastifyWebhooks } from 'chat-webhooks/fastify';
  import { nodeMiddleware } from 'chat-webhooks/node';
  const zodLoaded = () => '__zod_globalConfig' in globalThis;
  // commander is CommonJS: imported or required, it is in require's cache.
  const commanderLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('/commander/'));
  const seen = [];
  const webhooks = createWebhooks({ auth: false, dedupe: false });
  webhooks.on('message_sent', () => {});
  webhooks.onError((error) => seen.push(error));
  void [lambdaHandler, fetchHandler, expressMiddleware, fastifyWebhooks, nodeMiddleware];
  const fixture = JSON.parse(readFileSync('fixtures/message_sent.json', 'utf8'));
  const post = async (body) => {
    const response = await fetchHandler(webhooks)(new Request('http://x/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    return response.status;
  };
  const afterImport = zodLoaded();
  const valid = await post(fixture);
  const afterValid = zodLoaded();
  const commander = commanderLoaded();
`;

describe('zod off the receive path, in a fresh process', () => {
  beforeAll(() => {
    // CI builds before testing; a local run on a fresh clone builds here.
    if (!existsSync(`${root}dist/src/index.js`)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
  }, 120_000);

  it('importing the receiving entries and answering a valid delivery loads neither zod nor commander', () => {
    const result = run(`${receiver}
      console.log(JSON.stringify({ afterImport, valid, afterValid, commander, errors: seen.length }));`);
    expect(result).toEqual({ afterImport: false, valid: 200, afterValid: false, commander: false, errors: 0 });
  });

  it.each([
    ['synchronously (require of an ES module)', []],
    ['asynchronously (where require cannot load it)', ['--no-experimental-require-module']],
  ])('the first invalid payload loads zod %s, and onError gets the issues zod explains', (_how, flags) => {
    const result = run(
      `${receiver}
      const bad = structuredClone(fixture);
      bad.data.message.id = 42;
      bad.data.message.sentAt = 'yesterday';
      const invalid = await post(bad);
      const again = await post({ ...bad, data: { ...bad.data, message: { ...bad.data.message, conversationId: 7 } } });
      // Today's explanation: zod's, through the explainer over the whole event's schema.
      const { eventSchemaOf } = await import('chat-webhooks/schemas');
      const { explainRejection } = await import('./dist/src/receive/parse/explain.js');
      const expected = explainRejection(eventSchemaOf('message_sent'), bad);
      console.log(JSON.stringify({ valid, afterValid, invalid, again, zod: zodLoaded(), issues: seen[0]?.issues, message: seen[0]?.message, expected, second: seen[1]?.issues.map((i) => i.path.join('.')) }));`,
      flags,
    );
    expect(result.afterValid).toBe(false);
    expect([result.valid, result.invalid, result.again]).toEqual([200, 200, 200]);
    expect(result.zod).toBe(true);
    const paths = (result.issues as { path: unknown[] }[]).map((issue) => issue.path.join('.'));
    expect(paths).toEqual(['data.message.id', 'data.message.sentAt']);
    expect(result.issues).toEqual(result.expected);
    expect(result.message).toMatch(/data\.message\.id: Invalid input: expected string, received number/);
    expect(result.second).toEqual(['data.message.id', 'data.message.conversationId', 'data.message.sentAt']);
  });
});
