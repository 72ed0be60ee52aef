/**
 * A cold start pays for every Node built-in its entry loads (issue 37): node:http alone, with net and the HTTP
 * parser behind it, is ~10 ms of a Lambda's import. In a fresh process on the built package, the minimal Lambda
 * receiver (and the main entry) answer a delivery without loading node:http, and ALB still gets Node's reason
 * phrases.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { STATUS_TEXT } from '../../adapters/lambda/status-text.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

const receiver = `
  import { readFileSync } from 'node:fs';
  const before = new Set(process.moduleLoadList);
  const { createWebhooks } = await import('chat-webhooks');
  const { lambdaHandler } = await import('chat-webhooks/lambda');
  const webhooks = createWebhooks({ auth: false, dedupe: false });
  webhooks.on('message_sent', () => {});
  const handler = lambdaHandler(webhooks);
  const alb = { httpMethod: 'POST', path: '/', headers: { 'content-type': 'application/json' }, requestContext: { elb: { targetGroupArn: 'arn' } },
    body: readFileSync('fixtures/message_sent.json', 'utf8'), isBase64Encoded: false };
  const result = await handler(alb, { getRemainingTimeInMillis: () => 30000 });
  const loaded = process.moduleLoadList.filter((name) => !before.has(name) && name.startsWith('NativeModule '));
  console.log(JSON.stringify({ status: result.statusDescription, loaded: loaded.map((name) => name.slice(13)) }));
`;

describe('built-ins at cold start', () => {
  beforeAll(() => {
    // CI builds before testing; a local run on a fresh clone builds here.
    if (!existsSync(`${root}dist/src/index.js`)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
  }, 120_000);

  it('the minimal Lambda receiver answers ALB without loading node:http', () => {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', receiver], { cwd: root, encoding: 'utf8' });
    const { status, loaded } = JSON.parse(out.trim().split('\n').at(-1) as string) as { status: string; loaded: string[] };
    expect(status).toBe('200 OK');
    expect(loaded.filter((name) => /^(_?http|net)\b/.test(name))).toEqual([]);
  });

  it('the reason phrases are node:http’s', () => {
    expect({ ...STATUS_TEXT }).toEqual(Object.fromEntries(Object.entries(STATUS_CODES).map(([code, text]) => [Number(code), text])));
  });
});
