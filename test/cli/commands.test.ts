/** The CLI's one-shot commands run as a user would: help, triggers, validate, exit codes, colors. */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { triggers } from '../../src/index.js';
import { assertBuilt, CLI, ROOT, runCli, runInTerminal } from './run-cli.js';

const ESC = '\u001b[';
const dir = mkdtempSync(join(tmpdir(), 'chat-webhooks-cli-'));
const fixture = (name: string) => readFileSync(join(ROOT, 'fixtures', name), 'utf8');
/** The body a refused-delivery fixture holds. */
const invalidBody = (name: string) => (JSON.parse(fixture(`invalid/${name}`)) as { body: string }).body;

beforeAll(assertBuilt);

describe('help', () => {
  const commands = ['send', 'listen', 'validate', 'triggers', 'replay', 'inbox', 'reconcile', 'serve', 'inbox stats', 'inbox list', 'inbox retry', 'inbox purge'];
  it.each(commands)('%s --help shows usage and an example, exit 0', async (command) => {
    const { code, stdout } = await runCli([...command.split(' '), '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain(`Usage: chat-webhooks ${command}`);
    expect(stdout).toMatch(/Examples?:\n {2}\$ chat-webhooks /);
  });

  it('listen --help says how to run the server it forwards to: ES modules, TypeScript on Node 20, a Lambda handler', async () => {
    const { stdout } = await runCli(['listen', '--help']);
    expect(stdout).toContain('"type": "module" in the package.json');
    expect(stdout).toContain('Node 20 does not run TypeScript: `npx tsx server.ts`');
    expect(stdout).toContain('chat-webhooks serve ./handler.mjs');
  });

  it('the program lists every command', async () => {
    const { code, stdout } = await runCli(['--help']);
    expect(code).toBe(0);
    for (const command of ['send', 'listen', 'validate', 'triggers', 'replay', 'inbox', 'reconcile', 'serve']) expect(stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
  });
});

describe('usage errors exit 2 with one line and no stack trace', () => {
  it.each([
    [['send', 'message_sent', '--url', 'http://127.0.0.1:9/', '--bogus'], /unknown option '--bogus'/],
    [['send', 'message_sent'], /required option '--url <url>'/],
    [['send', 'message_sent', '--url', 'not a url'], /Expected a URL/],
    [['send', 'message_sent', '--url', 'http://127.0.0.1:9/', '--count', '0'], /Expected a whole number/],
    [['send', 'mesage_sent', '--url', 'http://127.0.0.1:9/'], /Unknown trigger "mesage_sent". Did you mean "message_sent"\?/],
    [['send', 'message_sent', '--url', 'http://127.0.0.1:9/', '--user', 'only'], /both --user and --password/],
    [['send', 'message_sent', '--url', 'http://127.0.0.1:9/', '--set', 'nothing'], /--set expects path=value/],
    [['validate', join(dir, 'missing.json')], /No such file/],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['inbox', 'stats'], /Name one store: --sqlite <path>, --redis <url> or --postgres <url>/],
    [['inbox', 'purge', '--state', 'running', '--sqlite', 'x.db'], /Running entries belong to a handler/],
  ])('%j', async (args, message) => {
    const { code, stderr, stdout } = await runCli(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr + stdout).not.toMatch(/^\s+at /m);
  });

  it('an override that makes the event invalid is refused before anything is sent, with its path', async () => {
    const { code, stderr } = await runCli(['send', 'message_sent', '--url', 'http://127.0.0.1:9/', '--set', 'data.message.sentAt=soon']);
    expect(code).toBe(2);
    expect(stderr).toContain('data.message.sentAt:');
    expect(stderr).toContain('--no-validate');
  });
});

describe('triggers', () => {
  it('--json lists every known trigger with its description and key fields, one JSON object a line', async () => {
    const { code, stdout } = await runCli(['triggers', '--json']);
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n').map((line) => JSON.parse(line) as { trigger: string; fires: string; keyFields: string[] });
    expect(lines.map((line) => line.trigger)).toEqual([...triggers]);
    for (const line of lines) {
      expect(line.fires.length).toBeGreaterThan(5);
      expect(line.keyFields.length).toBeGreaterThan(0);
    }
    expect(lines.find((line) => line.trigger === 'call_ended')).toMatchObject({ envelopeType: 'call', beyondSpec: false });
  });

  it('reads as a table without --json', async () => {
    const { code, stdout } = await runCli(['triggers']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^message_sent +After a message is sent$/m);
    expect(stdout).toContain(`${triggers.length} triggers`);
  });
});

describe('validate', () => {
  it('a valid fixture: exit 0', async () => {
    const { code, stdout } = await runCli(['validate', 'fixtures/message_sent.json']);
    expect(code).toBe(0);
    expect(stdout).toContain('✓ fixtures/message_sent.json: message_sent');
  });

  it('an invalid payload: exit 1 with the exact path', async () => {
    const file = join(dir, 'id-number.json');
    writeFileSync(file, invalidBody('message-sent-id-number.json'));
    const { code, stdout } = await runCli(['validate', file]);
    expect(code).toBe(1);
    expect(stdout).toContain('message_sent invalid_payload');
    expect(stdout).toMatch(/data\.message\.id: .*expected string, received number/);
  });

  it('a pretty-printed file that is not JSON: one invalid_json verdict, not one per line', async () => {
    const file = join(dir, 'broken.json');
    writeFileSync(file, '{\n  "trigger": "message_sent",\n  "data": {},\n}\n');
    const { code, stdout } = await runCli(['validate', '--json', file]);
    expect(code).toBe(1);
    expect(stdout.trim().split('\n').map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ valid: false, code: 'invalid_json' }),
    ]);
  });

  it('an NDJSON stream on stdin: a verdict per line, exit 1 when any is invalid', async () => {
    const lines = [
      JSON.stringify(JSON.parse(fixture('message_sent.json'))),
      invalidBody('user-blocked-no-users.json'),
      JSON.stringify({ trigger: 'brand_new_trigger', data: {} }),
    ];
    const { code, stdout } = await runCli(['validate', '--json', '-'], { input: `${lines.join('\n')}\n` });
    expect(code).toBe(1);
    const verdicts = stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(verdicts).toEqual([
      { line: 1, valid: true, trigger: 'message_sent', known: true },
      expect.objectContaining({ line: 2, valid: false, code: 'invalid_payload', trigger: 'user_blocked' }),
      { line: 3, valid: true, trigger: 'brand_new_trigger', known: false },
    ]);
    expect(verdicts[1]?.issues).toEqual([expect.objectContaining({ path: 'data.users' })]);
  });

  it('only valid lines on stdin: exit 0', async () => {
    const input = ['message_sent.json', 'call_ended.json'].map((name) => JSON.stringify(JSON.parse(fixture(name)))).join('\n');
    const { code, stdout } = await runCli(['validate', '-'], { input });
    expect(code).toBe(0);
    expect(stdout).toContain('2 valid, 0 invalid');
  });
});

describe('colors', () => {
  const command = `'${process.execPath}' '${CLI}' validate fixtures/invalid/data-null.json`;

  it('never when stdout is not a terminal', async () => {
    const { stdout } = await runCli(['triggers']);
    expect(stdout).not.toContain(ESC);
  });

  it('on a terminal', async () => {
    const { stdout } = await runInTerminal(command);
    expect(stdout).toContain(`${ESC}31m`);
  });

  it('never with NO_COLOR, even on a terminal', async () => {
    const { stdout } = await runInTerminal(command, { NO_COLOR: '1' });
    expect(stdout).toContain('invalid_envelope');
    expect(stdout).not.toContain(ESC);
  });
});

describe('pipes', () => {
  it('a reader that stops early (| head) is not an error', async () => {
    // Enough output that the writer is still writing when head has gone.
    const file = join(dir, 'many.ndjson');
    writeFileSync(file, `${JSON.stringify(JSON.parse(fixture('message_sent.json')))}\n`.repeat(3000));
    const script = `'${process.execPath}' '${CLI}' validate '${file}' | head -1; echo "status \${PIPESTATUS[0]}"`;
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
      execFile('bash', ['-c', script], { cwd: ROOT }, (error, out, err) => (error ? reject(error) : resolve({ stdout: out, stderr: err }))),
    );
    expect(stdout).toMatch(/^✓ line 1: message_sent\nstatus 0\n$/);
    expect(stderr).not.toContain('EPIPE');
  });
});
