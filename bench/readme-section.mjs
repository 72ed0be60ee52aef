/**
 * Renders the performance guide's figures (docs/performance.md, between `<!-- bench:start -->` and
 * `<!-- bench:end -->`) from bench/results/http.json and, when counted, bench/results/instructions.json:
 * `node bench/readme-section.mjs` prints it, `--write` puts it in docs/performance.md (its links are relative to docs/).
 * Not run by `npm run bench`, so a local run never edits the guide by itself.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const result = JSON.parse(readFileSync(new URL('./results/http.json', import.meta.url), 'utf8'));
const x = (value) => `${value.toFixed(2)}×`;
const find = (label) => result.ratios.find((r) => r.label.startsWith(label));

const rows = [
  ['`nodeMiddleware`', 'nodeMiddleware / bare', 'nodeMiddleware / octokit', 'bare node:http + `JSON.parse`'],
  ['`fastifyWebhooks`', 'fastifyWebhooks / bare', 'fastifyWebhooks / octokit', 'bare Fastify route'],
  ['`expressMiddleware`', 'expressMiddleware / bare', 'expressMiddleware / octokit', 'bare Express + `express.json()`'],
  ['`fetchHandler`', 'fetchHandler / bare', 'fetchHandler / octokit', 'bare fetch handler, same node:http bridge'],
].map(([name, bareLabel, octokitLabel, bareText]) => {
  const bare = find(bareLabel);
  const octokit = find(octokitLabel);
  if (!bare) return null;
  const cell = (r) => (r ? `${x(r.value)}${r.target ? ` (target ≥${r.target}×: ${r.met ? 'met' : '**missed**'})` : ''}` : '—');
  return `| ${name} | ${cell(bare)} vs ${bareText} | ${cell(octokit)} |`;
});
const lambda = result.lambda?.summary;
const medians = Object.fromEntries(Object.entries(result.servers).map(([name, s]) => [name, Math.round(s.summary.median).toLocaleString('en-US')]));
const memory = result.memory
  .map((m) => {
    const sawtooth = !m.flat && m.heapAfterGcGrowthMB < 1 ? ', heap garbage awaiting a major GC, not retained' : '';
    return `${m.server} ${m.rssAfterWarmupMB} → ${m.rssEndMB} MB, later peaks ${m.rssPeakGrowthMB >= 0 ? '+' : ''}${m.rssPeakGrowthMB} MB, retained heap ${m.heapAfterGcGrowthMB >= 0 ? '+' : ''}${m.heapAfterGcGrowthMB} MB (${m.flat ? 'flat' : `**not flat**${sawtooth}`})`;
  })
  .join('; ');
const allocation = result.allocation
  .filter((a) => a.heapBytesPerRequest !== null && ['bare-node', 'ours-node', 'octokit'].includes(a.server))
  .map((a) => `${a.server} ${(a.heapBytesPerRequest / 1024).toFixed(1)} KB`)
  .join(', ');

/** Simulated cycles per request (`npm run bench:instructions`), when counted: they do not move with the host's load. */
let counted = {};
try {
  counted = JSON.parse(readFileSync(new URL('./results/instructions.json', import.meta.url), 'utf8')).counts;
} catch {
  // Not counted yet: the section quotes req/s only.
}
const k = (name) => `${Math.round(counted[name].cycles / 1000)} k`;
const status = (met) => (met ? 'met' : '**missed**');
const pair = (bare, ours, label, target) => {
  if (!counted[bare] || !counted[ours]) return null;
  const ratio = counted[bare].cycles / counted[ours].cycles;
  return `${label} bare ÷ ours ${ratio.toFixed(3)} (${k(bare)} against ${k(ours)}; target ≥ ${target}: ${status(ratio >= target)})`;
};
const lambdaCount =
  counted['lambda-bare'] && counted['lambda-ours']
    ? `\`lambdaHandler\` in process ${(counted['lambda-ours'].cycles / counted['lambda-bare'].cycles).toFixed(2)}× a bare handler's cycles (${k('lambda-ours')} against ${k('lambda-bare')}; target at most 1.4×: ${status(counted['lambda-ours'].cycles / counted['lambda-bare'].cycles <= 1.4)})` +
      (counted['lambda-ours'].allocated && counted['lambda-bare'].allocated
        ? ` and ${(counted['lambda-ours'].allocated / counted['lambda-bare'].allocated).toFixed(2)}× its JS heap allocation (${(counted['lambda-ours'].allocated / 1024).toFixed(2)} against ${(counted['lambda-bare'].allocated / 1024).toFixed(2)} KB)`
        : '')
    : null;
const counts = [pair('bare-node', 'ours-node', 'node:http', 0.92), pair('bare-fastify', 'ours-fastify', 'Fastify', 0.95), lambdaCount].filter(Boolean);
const countsText = counts.length
  ? `Counted, which load does not sway ([bench/results/instructions.md](../bench/results/instructions.md), \`npm run bench:instructions\`: valgrind's simulated cycles per request, instructions + 10 × L1 misses + 100 × last-level misses + 15 × mispredicted branches, with \`Content-Type: Application/json\` as the platform sends it): ${counts.join('; ')}.`
  : null;

const section = [
  '`npm run bench` builds the package. It runs the micro suite (`bench/micro.mjs`), then benchmarks every adapter over HTTP next to the bare framework it plugs into and next to `@octokit/webhooks`. Each server runs in its own process pinned to one core; autocannon runs pinned to the other. The same ~1 KB `message_sent` body goes to every server, made distinct per request, and our servers also get a valid Basic auth header. Each pair runs 3 interleaved rounds of 5 s, after a 2 s warm-up. The suite also measures memory (RSS over 20 000 requests, allocation per request) and takes a CPU profile of the node:http path. Last, it runs the inboxes side by side (`npm run bench:inboxes`, which needs `redis-server`). It takes about 11 minutes. `BENCH_QUICK=1 npm run bench` gives a short run. See [bench/README.md](../bench/README.md) for the method.',
  '',
  `Last committed run: [bench/results/latest.md](../bench/results/latest.md) (full table, diagnostics, memory), [bench/results/profile.md](../bench/results/profile.md) (CPU profile). Conditions: ${result.date.slice(0, 10)}, node ${result.node}, ${result.machine.cpus} × ${result.machine.cpuModel}, library at \`${result.git?.commit.slice(0, 7) ?? '?'}\`.`,
  '',
  '![Throughput ratios of the adapters](../bench/results/ratios.svg)',
  '',
  '| adapter | throughput vs the bare framework | vs @octokit/webhooks `createNodeMiddleware` |',
  '| --- | --- | --- |',
  ...rows.filter(Boolean),
  '',
  `Medians in req/s: bare node:http ${medians['bare-node']}, ours ${medians['ours-node']}; bare Fastify ${medians['bare-fastify'] ?? '—'}, ours ${medians['ours-fastify'] ?? '—'}; ` +
    `bare Express ${medians['bare-express'] ?? '—'}, ours ${medians['ours-express'] ?? '—'}; octokit ${medians.octokit}. ` +
    (lambda
      ? `Lambda, measured in process one invocation at a time: a bare handler takes ${lambda.bare.usPerInvocation.toFixed(1)} µs per invocation and \`lambdaHandler\` ${lambda.ours.usPerInvocation.toFixed(1)} µs (${x(lambda.ours.usPerInvocation / lambda.bare.usPerInvocation)}, target at most 2×), including the wait for the handlers to finish. `
      : '') +
    `RSS over 20 000 requests after warm-up: ${memory}. JS heap allocated per request: ${allocation}.`,
  '',
  ...(countsText ? [countsText, ''] : []),
  'The req/s figures are noisy on a shared machine (the same pair swung from 0.71× to 1.46× between rounds of one run); the counts above are not. The absolute figures depend on the machine. Only the ratios, measured side by side in one run, carry over.',
].join('\n');

if (process.argv.includes('--write')) {
  const guideUrl = new URL('../docs/performance.md', import.meta.url);
  const guide = readFileSync(guideUrl, 'utf8');
  const start = guide.indexOf('<!-- bench:start -->');
  const end = guide.indexOf('<!-- bench:end -->');
  if (start === -1 || end === -1) throw new Error('docs/performance.md has no bench markers');
  writeFileSync(guideUrl, `${guide.slice(0, start)}<!-- bench:start -->\n${section}\n${guide.slice(end)}`);
  console.log('docs/performance.md figures updated');
} else {
  console.log(section);
}
