/**
 * `serve <module>` runs a real Lambda handler module (built with the package's `lambdaHandler`) behind local
 * HTTP: `send` and `listen --forward` reach it as they would a deployed function. A second module echoes the
 * event it gets, to check the API Gateway HTTP API (2.0) translation both ways, bytes included.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI, cleanEnv, Listener, ROOT, runCli } from './run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'chat-webhooks-serve-'));
const dist = (path: string) => pathToFileURL(join(ROOT, 'dist', path)).href;

interface Served {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  stop(): Promise<number | null>;
}

function startServe(args: string[], cwd = dir): Promise<Served> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args, '--port', '0'], { cwd, env: cleanEnv() });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 10_000);
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const port = /on http:\/\/127\.0\.0\.1:(\d+)\//.exec(stderr)?.[1];
      if (!port) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({
        child,
        url: `http://127.0.0.1:${port}`,
        stdout: () => stdout,
        stderr: () => stderr,
        stop: () => new Promise((done) => (child.once('exit', (code) => done(code)), child.kill('SIGINT'))),
      });
    });
  });
}

let app: Served;
let echo: Served;

beforeAll(async () => {
  assertBuilt();
  writeFileSync(
    join(dir, 'handler.mjs'),
    `import { createWebhooks } from '${dist('src/index.js')}';
import { lambdaHandler } from '${dist('adapters/lambda/index.js')}';
const webhooks = createWebhooks({ auth: { username: 'app', password: 's3cret' }, logger: {} });
webhooks.onAny((event) => console.log('handled ' + event.trigger + ' ' + event.data.message.id));
export const handler = lambdaHandler(webhooks);
`,
  );
  writeFileSync(
    join(dir, 'echo.mjs'),
    `export const handler = async (event) => {
  if (event.rawPath === '/throw') throw new Error('the handler broke');
  if (event.rawPath === '/plain') return { answer: 42 };
  return { statusCode: 201, headers: { 'X-Echo': 'yes' }, cookies: ['a=1', 'b=2'], body: Buffer.from(JSON.stringify(event)).toString('base64'), isBase64Encoded: true };
};
`,
  );
  [app, echo] = await Promise.all([startServe(['handler.mjs']), startServe(['echo.mjs'])]);
});

afterAll(async () => {
  expect(await app.stop()).toBe(0);
  expect(await echo.stop()).toBe(0);
  rmSync(dir, { recursive: true, force: true });
});

describe('serve: a lambdaHandler module over local HTTP', () => {
  it('send reaches the handler: 200 with the credentials (handled), 401 without', async () => {
    const sent = await runCli(['send', 'message_sent', '--url', `${app.url}/webhooks`, '--user', 'app', '--password', 's3cret']);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^200 /);
    const refused = await runCli(['send', 'message_sent', '--url', `${app.url}/webhooks`]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/^401 /);
    await expect.poll(() => app.stdout()).toMatch(/POST \/webhooks 401 \d+ ms/);
    expect(app.stdout()).toMatch(/handled message_sent \S+\nPOST \/webhooks 200 \d+ ms/);
    expect(app.stdout().match(/^handled /gm)).toHaveLength(1);
  });

  it('listen --forward reaches it with the delivery\'s own credentials', async () => {
    const listener = await Listener.start(['--forward', `${app.url}/webhooks`]);
    try {
      const sent = await runCli(['send', 'message_sent', '--url', `${listener.url}webhooks`, '--user', 'app', '--password', 's3cret', '--set', 'data.message.id=fwd-1']);
      expect(sent.code).toBe(0);
      const [record] = await listener.waitFor(1);
      expect(record?.forward).toMatchObject({ url: `${app.url}/webhooks`, status: 200 });
      await expect.poll(() => app.stdout()).toContain('handled message_sent fwd-1');
    } finally {
      expect(await listener.stop()).toBe(0);
    }
  });
});

describe('listen --forward to a function that wants Basic auth', () => {
  it('a 401 to a delivery that came without credentials hints at --user, once', async () => {
    const listener = await Listener.start(['--forward', `${app.url}/webhooks`]);
    try {
      expect((await runCli(['send', 'message_sent', '--count', '2', '--url', `${listener.url}webhooks`])).code).toBe(0);
      const records = await listener.waitFor(2);
      expect(records.map((record) => record.forward?.status)).toEqual([401, 401]);
      await expect.poll(() => listener.stderr).toContain('Hint: ');
      expect(listener.stderr).toContain(
        `Hint: ${app.url}/webhooks answered 401 (it wants Basic auth) and the delivery came without credentials: send it with --user and --password`,
      );
      expect(listener.stderr.match(/Hint: /g)).toHaveLength(1);
    } finally {
      expect(await listener.stop()).toBe(0);
    }
  });
});

describe('serve: the API Gateway HTTP API translation', () => {
  it('gives the handler a payload 2.0 event with the very bytes sent, and answers its result as API Gateway does', async () => {
    const bytes = Buffer.from([0x7b, 0xff, 0x00, 0x22, 0x7d]); // not UTF-8: must arrive base64, unchanged
    const response = await fetch(`${echo.url}/hooks/a?x=1&y=2&x=3`, {
      method: 'POST',
      headers: { 'content-type': 'Application/json', cookie: 'session=abc; theme=dark', 'x-many': 'one' },
      body: bytes,
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-echo')).toBe('yes');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    const event = (await response.json()) as Record<string, any>;
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: '$default',
      rawPath: '/hooks/a',
      rawQueryString: 'x=1&y=2&x=3',
      queryStringParameters: { x: '1,3', y: '2' },
      cookies: ['session=abc', 'theme=dark'],
      isBase64Encoded: true,
      requestContext: { http: { method: 'POST', path: '/hooks/a', sourceIp: '127.0.0.1' }, stage: '$default' },
    });
    expect(event.headers['content-type']).toBe('Application/json');
    expect(event.headers.cookie).toBeUndefined();
    expect(Buffer.from(event.body, 'base64').equals(bytes)).toBe(true);
    expect(event.requestContext.time).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
  });

  it('a text body arrives as text; a result without statusCode is a 200 JSON body; a throw is a 502', async () => {
    const text = await (await fetch(`${echo.url}/t`, { method: 'POST', body: '{"broken": ' })).json();
    expect(text).toMatchObject({ body: '{"broken": ', isBase64Encoded: false });
    const plain = await fetch(`${echo.url}/plain`);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('application/json');
    expect(await plain.json()).toEqual({ answer: 42 });
    const thrown = await fetch(`${echo.url}/throw`, { method: 'POST' });
    expect(thrown.status).toBe(502);
    expect(await thrown.json()).toEqual({ message: 'Internal Server Error' });
    await expect.poll(() => echo.stderr()).toContain('The handler failed: Error: the handler broke');
  });
});

describe('serve: a module it cannot run says why', () => {
  it('no such file, no such export, TypeScript on Node, CommonJS under "type": "module"', async () => {
    const sub = mkdtempSync(join(dir, 'esm-'));
    writeFileSync(join(sub, 'package.json'), '{ "type": "module" }');
    writeFileSync(join(sub, 'old.js'), 'const fs = require("node:fs");\nmodule.exports.handler = async () => ({ statusCode: 200, body: "" });\n');
    writeFileSync(join(sub, 'handler.ts'), 'export const handler = async (event: unknown) => ({ statusCode: 200, body: "" });\n');
    const run = (args: string[]) => runCli(['serve', ...args, '--port', '0'], { cwd: sub });
    const [missing, wrongExport, cjs, ts] = await Promise.all([
      run(['nope.mjs']),
      run([join(dir, 'handler.mjs'), '--handler', 'main']),
      run(['old.js']),
      run(['handler.ts']),
    ]);
    expect(missing).toMatchObject({ code: 2, stderr: 'chat-webhooks: No such file: nope.mjs.\n' });
    expect(wrongExport.code).toBe(2);
    expect(wrongExport.stderr).toContain('exports no function "main"');
    expect(wrongExport.stderr).toContain('It exports "handler": name one with --handler.');
    expect(cjs.code).toBe(2);
    expect(cjs.stderr).toContain('old.js is CommonJS (require, module.exports) but Node loads it as an ES module ("type": "module"): name it .cjs.');
    // Node 22.6+ may strip the types itself; Node 20 cannot.
    if (ts.code !== null && Number(process.versions.node.split('.')[0]) < 22) {
      expect(ts.code).toBe(2);
      expect(ts.stderr).toContain("Node cannot import handler.ts (TypeScript) by itself: compile it and serve the .js, or load it through a loader: NODE_OPTIONS='--import tsx'");
    }
  });
});
