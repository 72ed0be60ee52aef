/**
 * The examples as a new user runs them: the demo behind `npm start` says what it received, recognizes a
 * repeat, refuses a wrong password, stops on SIGTERM and answers a busy port with one line; the Lambda
 * example shows a 200 and a 401; the Hono example routes a delivery through its app to the fetch handler.
 */
import { execFileSync, spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:net';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const children: ChildProcessWithoutNullStreams[] = [];

function run(script: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [script], { cwd: root, env: { ...process.env, ...env } });
  children.push(child);
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const waitFor = async (text: string) => {
    const deadline = Date.now() + 10_000;
    while (!output.includes(text)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`never printed "${text}":\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { child, output: () => output, waitFor };
}

beforeAll(() => {
  if (!existsSync(`${root}dist/src/index.js`)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
}, 120_000);

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

describe('examples/demo.mjs (npm start)', () => {
  it('prints each delivery, recognizes the repeat, refuses a wrong password and stops on SIGTERM', async () => {
    const data = mkdtempSync(join(tmpdir(), 'demo-data-'));
    const demo = run('examples/demo.mjs', { PORT: '0', DATA_DIR: data });
    await demo.waitFor('curl ');
    expect(demo.output()).toContain(`stored in ${join(data, 'demo-inbox.sqlite')} before the 200`);
    const url = /on (http:\/\/127\.0\.0\.1:\d+\/webhooks)/.exec(demo.output())?.[1];
    const body = /-d '([^']+)'/.exec(demo.output())?.[1];
    expect(url).toBeDefined();
    const post = (password: string) =>
      fetch(url!, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`demo:${password}`).toString('base64')}` },
        body,
      });
    expect((await post('demo-password')).status).toBe(200);
    await demo.waitFor('received    message_sent: alice → bob: Hello from curl');
    expect((await post('demo-password')).status).toBe(200);
    await demo.waitFor('duplicate   message_sent');
    // The sample body has neither appId nor webhook: both places stay, empty, so the key cannot meet another
    // envelope's (issue 33).
    expect(demo.output()).toContain('(key ::message_sent:1)');
    expect((await post('wrong')).status).toBe(401);
    await demo.waitFor('refused     401 unauthorized');
    // An invalid payload is answered 200 (so the platform does not resend it): accepted, not "refused".
    const invalid = body!.replace('"id":"1"', '"id":1');
    expect(invalid).not.toBe(body);
    const accepted = await fetch(url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('demo:demo-password').toString('base64')}` },
      body: invalid,
    });
    expect(accepted.status).toBe(200);
    await demo.waitFor('accepted    200 invalid_payload: The message_sent payload does not match its schema');
    expect(demo.output()).not.toMatch(/refused +200/);
    expect(demo.output().match(/^received /gm)).toHaveLength(1);

    demo.child.kill('SIGTERM');
    const [code] = await once(demo.child, 'exit');
    expect(code).toBe(0);
    expect(demo.output()).toContain('stopped');

    // Restarted on the same inbox: the delivery is still known, so sending it again is a duplicate.
    const again = run('examples/demo.mjs', { PORT: '0', DATA_DIR: data });
    await again.waitFor('curl ');
    const url2 = /on (http:\/\/127\.0\.0\.1:\d+\/webhooks)/.exec(again.output())?.[1];
    const repeat = await fetch(url2!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('demo:demo-password').toString('base64')}` },
      body,
    });
    expect(repeat.status).toBe(200);
    await again.waitFor('duplicate   message_sent');
    expect(again.output()).not.toContain('received ');
    again.child.kill('SIGTERM');
    await once(again.child, 'exit');
    rmSync(data, { recursive: true, force: true });
  });

  it('answers a busy port with one line and exit code 1', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const demo = run('examples/demo.mjs', { PORT: String(port), DATA_DIR: mkdtempSync(join(tmpdir(), 'demo-data-')) });
      const [code] = await once(demo.child, 'exit');
      expect(code).toBe(1);
      expect(demo.output().trim().split('\n')).toEqual([
        `chat-webhooks demo: cannot listen on http://127.0.0.1:${port}/webhooks: port ${port} is already in use (set PORT to use another one)`,
      ]);
    } finally {
      blocker.close();
    }
  });

  it.skipIf(spawnSync('curl', ['--version']).status !== 0)("accepts the README's curl line, run from another folder", async () => {
    const readme = readFileSync(`${root}README.md`, 'utf8');
    const line = /```sh\n(curl -u demo:demo-password[\s\S]*?)```/.exec(readme)?.[1];
    expect(line).toBeDefined();
    const data = mkdtempSync(join(tmpdir(), 'demo-data-'));
    const demo = run('examples/demo.mjs', { PORT: '0', DATA_DIR: data });
    await demo.waitFor('curl ');
    const port = /127\.0\.0\.1:(\d+)\/webhooks/.exec(demo.output())?.[1];
    const command = line!.replace('127.0.0.1:3000', `127.0.0.1:${port}`);
    const curl = spawnSync('sh', ['-c', `${command.trim()} -s -w ' %{http_code}'`], { cwd: tmpdir(), encoding: 'utf8' });
    expect(curl.stdout).toBe('OK 200');
    await demo.waitFor('received    message_sent: alice → bob: Hello from curl');
    demo.child.kill('SIGTERM');
    await once(demo.child, 'exit');
    rmSync(data, { recursive: true, force: true });
  });

  it('is what npm start runs, in the foreground (exec: a signal reaches the server, no orphan)', () => {
    const { scripts } = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
    expect(scripts.start).toMatch(/&& exec node examples\/demo\.mjs$/);
  });
});

describe('examples/lambda.mjs', () => {
  it('shows the 200 of the right credentials and the 401 of a wrong password', () => {
    const output = execFileSync(process.execPath, ['examples/lambda.mjs'], { cwd: root, encoding: 'utf8' });
    expect(output).toContain('right credentials: 200');
    expect(output).toContain('wrong password: 401 (WWW-Authenticate: Basic realm="webhooks")');
  });
});

describe('examples/hono.mjs', () => {
  it('answers a delivery 200 through the Hono app (printed), a wrong password 401, and its own route beside it', async () => {
    const hono = run('examples/hono.mjs', { PORT: '0' });
    await hono.waitFor('listening on ');
    const url = /listening on (\S+)/.exec(hono.output())?.[1] as string;
    const body = readFileSync(`${root}fixtures/message_sent.json`, 'utf8');
    const post = (password: string) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`demo:${password}`).toString('base64')}` }, body });
    expect((await post('demo-password')).status).toBe(200);
    await hono.waitFor('message_sent: {"message":{"id":"1421"');
    const refused = await post('wrong');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Basic realm="webhooks"');
    expect(await (await fetch(new URL('/health', url))).text()).toBe('ok');
    // Hono answers a path it has no route for; the receiver never sees it.
    expect((await fetch(new URL('/elsewhere', url), { method: 'POST', body })).status).toBe(404);
    hono.child.kill('SIGTERM');
    const [code] = await once(hono.child, 'exit');
    expect(code).toBe(0);
  });
});
