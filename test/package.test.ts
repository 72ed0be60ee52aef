/**
 * The published entry points: every subpath of the `exports` map resolves in the built package and exposes
 * the names docs/design.md promises, with type declarations beside it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';

const root = new URL('../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));

const promised: Record<string, string[]> = {
  'chat-webhooks': ['createWebhooks', 'createWorker', 'memoryInbox', 'idempotencyKey', 'parseWebhook', 'safeParseWebhook', 'triggers', 'isKnownTrigger', 'WebhookError', 'verifyBasicAuth'],
  'chat-webhooks/schemas': ['registry', 'triggers', 'eventSchemaOf'],
  'chat-webhooks/express': ['expressMiddleware'],
  'chat-webhooks/fastify': ['fastifyWebhooks'],
  'chat-webhooks/lambda': ['lambdaHandler'],
  'chat-webhooks/fetch': ['fetchHandler'],
  'chat-webhooks/node': ['nodeMiddleware'],
  'chat-webhooks/hono': ['honoHandler'],
  'chat-webhooks/testing': ['createTestEvent', 'basicAuthHeader', 'buildRequest'],
  'chat-webhooks/sqlite': ['sqliteInbox'],
  'chat-webhooks/redis': ['redisInbox'],
  'chat-webhooks/postgres': ['postgresInbox', 'migratePostgresInbox', 'migrationScript', 'SCHEMA_VERSION'],
  'chat-webhooks/otel': ['openTelemetry'],
  'chat-webhooks/reconcile': ['reconcile', 'ReconcileError', 'catchUp'],
  'chat-webhooks/aws': ['sqsQueue', 'sqsHandler', 'dynamoIdempotency', 'memoryIdempotency'],
  'chat-webhooks/api': [
    'createChatClient', 'createManagementClient', 'ApiError', 'ValidationError', 'messageDataSchema', 'messageDataSize',
    'messageTagsSchema', 'formFieldSchema', 'buttonActionSchema', 'form', 'webhookConfigSchema', 'appCreateSchema', 'authFromWebhookConfig',
  ],
};

describe('published package', () => {
  beforeAll(() => {
    // CI builds before testing; a local `npm test` on a fresh clone builds here.
    if (!existsSync(new URL('dist/src/index.js', root))) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
  }, 120_000);

  it('maps every subpath of docs/design.md, each as an ES module and as CommonJS, each with its types', () => {
    expect(Object.keys(pkg.exports).filter((key) => key !== './package.json').sort()).toEqual(
      Object.keys(promised).map((name) => name.replace('chat-webhooks', '.')).sort(),
    );
    type Branch = { types: string; default: string };
    for (const target of Object.values(pkg.exports) as Array<{ import: Branch; require: Branch } | string>) {
      if (typeof target === 'string') continue;
      expect(target.require.default).toBe(target.import.default.replace('./dist/', './dist/cjs/'));
      for (const file of [target.import.default, target.import.types, target.require.default, target.require.types]) {
        expect(existsSync(new URL(file, root)), file).toBe(true);
      }
    }
    expect(JSON.parse(readFileSync(new URL('dist/cjs/package.json', root), 'utf8'))).toEqual({ type: 'commonjs' });
    // Nested package.json files cannot carry `imports`: the CommonJS build requires Node's #platform by path.
    const auth = readFileSync(new URL('dist/cjs/src/receive/auth/auth.js', root), 'utf8');
    expect(auth).not.toContain('#platform');
    expect(auth).toContain('require("../../platform/node.js")');
  });

  it.each(Object.entries(promised))('%s exports the same names to require() as to import', (specifier, names) => {
    // Without require(esm), as on Node 20 before 20.19: the CommonJS build must stand on its own.
    const script = `
      const required = Object.keys(require(${JSON.stringify(specifier)})).sort();
      import(${JSON.stringify(specifier)}).then((m) => console.log(JSON.stringify([required, Object.keys(m).sort()])));`;
    const output = execFileSync(process.execPath, ['--no-experimental-require-module', '-e', script], { cwd: root, encoding: 'utf8' });
    const [required, imported] = JSON.parse(output);
    expect(required).toEqual(expect.arrayContaining(names));
    expect(required).toEqual(imported);
  });

  it.each(Object.entries(promised))('%s exports its names when imported by package name', (specifier, names) => {
    // A separate node process resolves the package by name through its exports map, as a user's code does.
    const script = `const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(Object.keys(m)));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(JSON.parse(output)).toEqual(expect.arrayContaining(names));
  });

  it('runs a delivery end to end through the built package', () => {
    const script = `
      import { createWebhooks } from 'chat-webhooks';
      import { buildRequest, createTestEvent } from 'chat-webhooks/testing';
      const webhooks = createWebhooks({ auth: { username: 'u', password: 'p' } });
      let text;
      webhooks.on('message_sent', (event) => { text = event.data.message.data.text; });
      const response = await webhooks.handle(buildRequest(createTestEvent('message_sent'), { auth: { username: 'u', password: 'p' } }));
      await response.done;
      console.log(JSON.stringify([response.status, text]));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(JSON.parse(output)).toEqual([200, JSON.parse(readFileSync(new URL('fixtures/message_sent.json', root), 'utf8')).data.message.data.text]);
  });
});
