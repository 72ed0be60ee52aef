/**
 * examples/observability/ as an operator loads it: promtool's unit tests of the alert rules, then a real
 * Prometheus (Debian's, installed by .ci/run) scraping examples/otel.mjs every second under a short load that
 * makes each thing the rules and the dashboard watch happen: accepted and repeated deliveries, refusals, 503s
 * from a locked inbox, a handler that always fails until its event is dead, and a catch-up on start that
 * recovers two messages an outage lost (from a local stand-in of the platform's list). Every dashboard query and every
 * alert's signal (its expression without the threshold it ends with) must return series, and every metric
 * they name must be one the exporter serves. Skipped only where prometheus is missing outside CI.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuthHeader, createTestEvent } from '../../src/testing/index.js';
import { startChatPlatform, type ChatPlatform, type ListedMessage } from '../support/chat-platform.js';
import { freePort } from '../support/redis-server.js';
import { waitFor } from './sdk.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const folder = join(root, 'examples/observability');
const installed = ['prometheus', 'promtool'].every((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0);
// As test/support/tools.ts does for the tools under tools/: missing in CI fails, missing elsewhere skips, by name.
const inCi = Boolean(process.env.CI);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MISSING = 'prometheus and promtool: not installed: run `apt-get install prometheus` (.ci/run does)';

/** Two messages the platform lists but never delivered, sent a few seconds before the example starts. */
const missed = (sentAt: number): ListedMessage[] =>
  ['9001', '9002'].map((id) => ({ id, sentAt, category: 'message', type: 'text', sender: 'u1', receiver: 'u2', receiverType: 'user', conversationId: 'u1_user_u2', data: { text: `missed ${id}` } }));

if (!installed && inCi) {
  it(`needs ${MISSING}`, () => {
    throw new Error(MISSING);
  });
} else if (!installed) {
  console.warn(`skipped: ${MISSING}`);
  it.skip(`skipped: ${MISSING}`, () => {});
}

describe.skipIf(!installed)('examples/observability against a real Prometheus', () => {
  it('promtool: the rules are valid and their unit tests (alerts.test.yml) pass', () => {
    const run = (args: string[]) => spawnSync('promtool', args, { cwd: folder, encoding: 'utf8' });
    for (const args of [['check', 'rules', 'alerts.yml'], ['test', 'rules', 'alerts.test.yml'], ['check', 'config', 'prometheus.yml']]) {
      const result = run(args);
      expect(result.status, `promtool ${args.join(' ')}\n${result.stdout}${result.stderr}`).toBe(0);
    }
  });

  const data = mkdtempSync(join(tmpdir(), 'observability-'));
  const children: ChildProcess[] = [];
  let platform: ChatPlatform | undefined;
  let example = '';
  let prometheus = '';
  let exporter = '';
  beforeAll(async () => {
    if (!existsSync(`${root}dist/src/telemetry/otel/index.js`)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
    platform = await startChatPlatform(missed(Math.floor(Date.now() / 1000) - 5));
    [example, exporter, prometheus] = await startAll(data, children, platform);
  }, 60_000);
  afterAll(async () => {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((child) => (child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve)) : undefined)));
    await platform?.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('every dashboard query and every alert signal returns series, on metrics the exporter serves', async () => {
    await load(example, join(data, 'otel-inbox.db'));
    const query = async (expr: string) => {
      const answer = await (await fetch(`${prometheus}/api/v1/query?query=${encodeURIComponent(expr)}`)).json();
      expect(answer.status, `${expr}: ${answer.error}`).toBe('success');
      return answer.data.result as unknown[];
    };
    // Everything the load did has been scraped (the dead event is the last to happen).
    const scraped = async () => (await query('chat_webhooks_dead_total')).length > 0 && (await query('http_server_request_duration_count{http_response_status_code="503"}')).length > 0;
    // Generous: beside the rest of the suite on two cores, the dead event's retries and the scrapes run late.
    for (const deadline = Date.now() + 45_000; !(await scraped()); await pause(250)) {
      if (Date.now() > deadline) throw new Error('Prometheus did not scrape the dead event and the 503 within 45 s');
    }
    await pause(2000);

    const served = metricNames(await (await fetch(exporter)).text());
    const dashboard = JSON.parse(readFileSync(join(folder, 'dashboard.json'), 'utf8')) as { panels: Array<{ title: string; targets: Array<{ expr: string }> }> };
    const panelQueries = dashboard.panels.flatMap((panel) => panel.targets.map((target) => ({ name: panel.title, expr: target.expr.replaceAll('$__rate_interval', '1m') })));
    const rules = ((await (await fetch(`${prometheus}/api/v1/rules`)).json()).data.groups as Array<{ rules: Array<{ name: string; query: string }> }>).flatMap((group) => group.rules);
    expect(rules.map((rule) => rule.name)).toContain('ChatWebhooksRefusals');
    const alertSignals = rules.map((rule) => ({ name: rule.name, expr: signalOf(rule.query) }));
    expect(panelQueries.length).toBeGreaterThanOrEqual(10);
    expect(alertSignals).toHaveLength(7);
    expect(rules.map((rule) => rule.name)).toContain('ChatWebhooksReconcileRecovering');

    const empty: string[] = [];
    const unknown: string[] = [];
    for (const { name, expr } of [...panelQueries, ...alertSignals]) {
      for (const metric of metricsOf(expr)) if (!served.has(metric)) unknown.push(`${name}: ${metric}`);
      if ((await query(expr)).length === 0) empty.push(`${name}: ${expr}`);
    }
    expect(unknown, 'metrics the exporter does not serve').toEqual([]);
    expect(empty, 'queries that returned no series').toEqual([]);
  }, 75_000);
});

/**
 * An alert's expression without its threshold. alerts.yml ends each expression with `<comparison> <number>`
 * (Prometheus's API gives it back on one line), and a comparison binds looser than everything before it.
 */
function signalOf(query: string): string {
  const threshold = /\s*(>|<|==|!=|>=|<=)\s*[\d.]+\s*$/;
  expect(query, 'an alert expression ending with its threshold').toMatch(threshold);
  return query.replace(threshold, '');
}

const PROMQL_WORDS = new Set(['sum', 'min', 'max', 'avg', 'count', 'group', 'rate', 'increase', 'histogram_quantile', 'by', 'on', 'without', 'ignoring', 'group_left', 'group_right', 'or', 'and', 'unless', 'bool']);

/** The metric names a PromQL expression selects (not its labels, functions or keywords). */
function metricsOf(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|on|without|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  return [...new Set(bare.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? [])].filter((word) => !PROMQL_WORDS.has(word));
}

/** The series names in a Prometheus text exposition (a histogram's _bucket, _count and _sum each). */
function metricNames(exposition: string): Set<string> {
  return new Set(exposition.split('\n').filter((line) => line && !line.startsWith('#')).map((line) => line.split(/[{ ]/)[0] as string));
}

async function startAll(data: string, children: ChildProcess[], platform: ChatPlatform): Promise<[string, string, string]> {
  const [exporterPort, prometheusPort] = [await freePort(), await freePort()];
  const catchUp = { CHAT_API_BASE_URL: platform.baseUrl, CHAT_API_KEY: platform.apiKey, CHAT_APP_ID: 'app1', CHAT_REGION: 'eu', CHAT_WEBHOOK: 'wh_main' };
  const env = { ...process.env, PORT: '0', PROMETHEUS_PORT: String(exporterPort), DATA_DIR: data, ATTEMPTS: '2', ...catchUp };
  const example = spawn(process.execPath, ['examples/otel.mjs'], { cwd: root, env });
  children.push(example);
  let output = '';
  example.stdout?.on('data', (chunk) => (output += chunk));
  example.stderr?.on('data', (chunk) => (output += chunk));
  const config = join(data, 'prometheus.yml');
  // The operator's configuration, with this run's port, a short scrape interval and the rules by absolute path.
  const shipped = readFileSync(join(folder, 'prometheus.yml'), 'utf8');
  writeFileSync(
    config,
    shipped
      // A scrape's timeout is at most its interval: 1 s leaves room for a loaded machine.
      .replace(/scrape_interval: \S+/, 'scrape_interval: 1s')
      .replace(/evaluation_interval: \S+/, 'evaluation_interval: 1s')
      .replace('- alerts.yml', `- ${join(folder, 'alerts.yml')}`)
      .replaceAll('127.0.0.1:9464', `127.0.0.1:${exporterPort}`),
  );
  const server = spawn('prometheus', [`--config.file=${config}`, `--storage.tsdb.path=${join(data, 'tsdb')}`, `--web.listen-address=127.0.0.1:${prometheusPort}`], { stdio: 'ignore' });
  children.push(server);
  await waitFor(() => /listening on (\S+)/.test(output), 15_000);
  const prometheus = `http://127.0.0.1:${prometheusPort}`;
  await waitFor(async () => (await fetch(`${prometheus}/-/ready`).catch(() => undefined))?.ok === true, 15_000);
  return [/listening on (\S+)/.exec(output)?.[1] as string, `http://127.0.0.1:${exporterPort}/metrics`, prometheus];
}

/**
 * A few seconds of traffic: deliveries (some sent twice), wrong passwords, an event whose handler always
 * fails (dead after its 2 attempts), and 503s while another process holds the inbox's SQLite file locked.
 */
async function load(url: string, databasePath: string): Promise<void> {
  const post = (body: unknown, authorization = basicAuthHeader('demo', 'demo-password')) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization }, body: JSON.stringify(body) });
  const message = (id: string, text: string) => createTestEvent('message_sent', { data: { message: { id, data: { text } } } });
  for (let round = 0; round < 6; round += 1) {
    const event = message(`m${round}`, `hello ${round}`);
    expect((await post(event)).status).toBe(200);
    expect((await post(event)).status).toBe(200);
    expect((await post(event, basicAuthHeader('demo', 'wrong'))).status).toBe(401);
    await pause(300);
  }
  expect((await post(message('poison', 'fail'))).status).toBe(200);
  const lock = new Database(databasePath, { timeout: 5000 });
  try {
    lock.exec('BEGIN EXCLUSIVE');
    expect((await post(message('locked-out', 'hello'))).status).toBe(503);
  } finally {
    lock.exec('ROLLBACK');
    lock.close();
  }
  expect((await post(message('after', 'hello'))).status).toBe(200);
}
