/**
 * examples/otel.mjs as an operator runs it: deliveries show up in the Prometheus scrape (counted by outcome
 * and reason, the inbox gauges present), spans on the console (server, producer, consumer), and /ready
 * answers with health(); the curl its header comment shows delivers an event the handler runs for.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { basicAuthHeader, createTestEvent } from '../../src/testing/index.js';
import { freePort } from '../support/redis-server.js';
import { waitFor } from './sdk.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const data = mkdtempSync(join(tmpdir(), 'otel-example-'));
afterAll(() => rmSync(data, { recursive: true, force: true }));
beforeAll(() => {
  if (!existsSync(`${root}dist/src/telemetry/otel/index.js`)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
}, 120_000);

it('exports metrics to Prometheus (scraped over HTTP) and prints spans on the console', async () => {
  const prometheusPort = await freePort();
  const child = spawn(process.execPath, ['examples/otel.mjs'], {
    cwd: root,
    env: { ...process.env, PORT: '0', PROMETHEUS_PORT: String(prometheusPort), DATA_DIR: data },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  try {
    await waitFor(() => /listening on (\S+)/.test(output) && output.includes('metrics on'), 15_000);
    const url = /listening on (\S+)/.exec(output)?.[1] as string;
    const post = (authorization: string) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization }, body: JSON.stringify(createTestEvent('message_sent')) });
    expect((await post(basicAuthHeader('demo', 'demo-password'))).status).toBe(200);
    expect((await post(basicAuthHeader('demo', 'wrong'))).status).toBe(401);
    await waitFor(() => output.includes('handled message_sent'), 10_000);

    const scrape = await (await fetch(`http://127.0.0.1:${prometheusPort}/metrics`)).text();
    expect(scrape).toMatch(/chat_webhooks_deliveries(?:_total)?\{[^}]*chat_webhooks_outcome="accepted"[^}]*\} 1/);
    expect(scrape).toMatch(/chat_webhooks_deliveries(?:_total)?\{[^}]*chat_webhooks_reason="unauthorized"[^}]*\} 1/);
    expect(scrape).toMatch(/http_server_request_duration(?:_seconds)?_count\{[^}]*http_response_status_code="200"[^}]*\} 1/);
    expect(scrape).toMatch(/chat_webhooks_inbox_entries\{[^}]*chat_webhooks_inbox_state="dead"[^}]*\} 0/);
    expect(scrape).toMatch(/chat_webhooks_inbox_commit_duration(?:_seconds)?_count\{[^}]*chat_webhooks_outcome="stored"[^}]*\} 1/);
    expect(scrape).toMatch(/chat_webhooks_handler_duration(?:_seconds)?_count\{[^}]*chat_webhooks_outcome="success"[^}]*\} 1/);

    await waitFor(() => output.includes("name: 'process sqlite'"), 5000);
    for (const name of ["name: 'POST /webhooks'", "name: 'send sqlite'", "name: 'process sqlite'"]) expect(output).toContain(name);

    const ready = await fetch(new URL('/ready', url));
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ok: true, inbox: 'ok', closing: false });
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
});

/** The `curl` lines of the example's header comment, continuations joined, as a shell would run them. */
function curlLines(): string[] {
  const comment = readFileSync(`${root}examples/otel.mjs`, 'utf8').split('\n').filter((line) => line.startsWith('//'));
  const text = comment.map((line) => line.replace(/^\/\/\s*(Then:)?\s*/, '')).join('\n').replace(/\\\n/g, ' ');
  return text.split('\n').filter((line) => line.startsWith('curl '));
}

it.skipIf(spawnSync('curl', ['--version']).status !== 0)("the header comment's curl sends a valid event (handled, not reported invalid)", async () => {
  const prometheusPort = await freePort();
  // Its own inbox: an event id the other test delivered would be a duplicate here, and never handled.
  const child = spawn(process.execPath, ['examples/otel.mjs'], {
    cwd: root,
    env: { ...process.env, PORT: '0', PROMETHEUS_PORT: String(prometheusPort), DATA_DIR: mkdtempSync(join(data, 'curl-')) },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  try {
    await waitFor(() => /listening on (\S+)/.test(output) && output.includes('metrics on'), 15_000);
    const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1] as string;
    const [deliver, scrape] = curlLines();
    expect(deliver).toContain('/webhooks');
    const curl = (line: string) =>
      spawnSync('sh', ['-c', `${line.replace(':3000/', `:${port}/`).replace(':9464/', `:${prometheusPort}/`)} -s -w ' %{http_code}'`], { encoding: 'utf8' });
    expect(curl(deliver!).stdout).toBe('OK 200');
    await waitFor(() => output.includes('handled message_sent'), 10_000);
    expect(curl(scrape!).stdout).toMatch(/chat_webhooks_deliveries(?:_total)?\{[^}]*chat_webhooks_outcome="accepted"[^}]*\} 1[\s\S]* 200$/);
    expect(output).not.toContain('invalid_payload');
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
});
