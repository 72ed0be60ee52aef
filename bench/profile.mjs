/**
 * CPU profile of a benchmark server under load: the server runs with `node --cpu-prof` (pinned like in the
 * throughput runs), autocannon loads it for the warm-up and measured time, the server exits and writes its
 * .cpuprofile, and the profile is summarised by self time: per function, and per area (our dist/ code, zod,
 * basic-auth, node internals, V8 builtins, GC).
 *
 *   node bench/profile.mjs [server=ours-node] [seconds=5]      (after `npm run build`)
 *
 * run.mjs calls `profileServer` at the end of a full run and writes bench/results/profile.md.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild } from './lib/procs.mjs';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));

/** Which part of the stack a profile node belongs to. */
function areaOf(url, functionName, scriptId) {
  if (functionName === '(garbage collector)') return 'V8 garbage collector';
  if (functionName === '(program)') return 'V8 (program: compiler, runtime, native outside JS)';
  if (functionName === '(idle)') return '(idle)';
  if (url.includes('/node_modules/')) {
    const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    return `dependency: ${match?.[1] ?? 'unknown'}`;
  }
  if (url.includes('/dist/')) return 'chat-webhooks (dist/)';
  if (url.startsWith('node:')) return 'node internals (http, net, streams, events)';
  if (url.includes('/bench/')) return 'bench server code';
  // Code compiled at run time (`new Function`: zod 4's compiled object validators) has a script but no URL.
  if (url === '' && scriptId && scriptId !== '0') return 'dependency: zod (compiled validators, new Function)';
  if (url === '') return 'native (syscalls such as writev, crypto and buffer bindings, regexps)';
  return 'other';
}

function shortUrl(url) {
  if (!url) return '';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  return path.startsWith(repoRoot) ? path.slice(repoRoot.length) : path;
}

/** Self time by function and by area from a .cpuprofile object. */
export function summarizeProfile(profile, top = 15, window = {}) {
  const { from = -Infinity, to = Infinity } = window;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  const { samples, timeDeltas } = profile;
  let at = profile.startTime;
  for (let i = 0; i < samples.length; i++) {
    at += timeDeltas[i];
    if (at < from || at >= to) continue;
    // timeDeltas[i + 1] is the time from this sample to the next: the time spent where this sample was taken.
    const delta = timeDeltas[i + 1] ?? 0;
    self.set(samples[i], (self.get(samples[i]) ?? 0) + delta);
  }
  const functions = new Map();
  const areas = new Map();
  let total = 0;
  let idle = 0;
  for (const [id, micros] of self) {
    const { callFrame } = byId.get(id);
    const name = callFrame.functionName || '(anonymous)';
    if (name === '(idle)') {
      idle += micros;
      continue;
    }
    total += micros;
    const url = shortUrl(callFrame.url);
    const key = `${name}\u0000${url}\u0000${callFrame.lineNumber}`;
    const entry = functions.get(key) ?? { function: name, location: url ? `${url}:${callFrame.lineNumber + 1}` : '(native)', selfMs: 0 };
    entry.selfMs += micros / 1000;
    functions.set(key, entry);
    const area = areaOf(callFrame.url, name, String(callFrame.scriptId));
    areas.set(area, (areas.get(area) ?? 0) + micros / 1000);
  }
  const pct = (ms) => Math.round((ms * 1000 * 1000) / total) / 10;

  // Inclusive ("total") time of chat-webhooks functions: each sample counts once for every distinct function
  // of dist/ on its stack.
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const inclusive = new Map();
  for (const [id, micros] of self) {
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const { callFrame } = byId.get(at);
      if (!callFrame.url.includes('/dist/')) continue;
      const key = `${callFrame.functionName || '(anonymous)'} ${shortUrl(callFrame.url)}:${callFrame.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + micros / 1000);
    }
  }
  return {
    busyMs: Math.round(total / 1000),
    idleMs: Math.round(idle / 1000),
    topFunctions: [...functions.values()]
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, top)
      .map((entry) => ({ ...entry, selfMs: Math.round(entry.selfMs), percent: pct(entry.selfMs) })),
    ourInclusive: [...inclusive.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([fn, ms]) => ({ function: fn, totalMs: Math.round(ms), percent: pct(ms) })),
    areas: [...areas.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([area, ms]) => ({ area, selfMs: Math.round(ms), percent: pct(ms) })),
  };
}

/**
 * Profiles one server: `loadgen` is a started loadgen child (see loadgen.mjs). Returns the summary and the
 * throughput reached while profiling (lower than unprofiled: sampling costs a little).
 */
export async function profileServer({ loadgen, server = 'ours-node', kind = 'chat', warmupSeconds = 2, seconds = 5, core = 0 }) {
  const dir = mkdtempSync(join(tmpdir(), 'chat-webhooks-prof-'));
  try {
    const child = startChild('servers.mjs', [server, '0'], { core, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
    const { port } = await child.ready;
    await loadgen.call({ type: 'run', port, kind, duration: warmupSeconds });
    // Only the measured run counts: the warm-up (JIT, a dedupe window still filling) is cut out by time.
    const from = (await child.call({ type: 'stats' })).stats.hrtimeUs;
    const { result } = await loadgen.call({ type: 'run', port, kind, duration: seconds });
    const to = (await child.call({ type: 'stats' })).stats.hrtimeUs;
    await child.stop();
    const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error('the server wrote no .cpuprofile');
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    return { server, rps: result?.rps, seconds, warmupSeconds, ...summarizeProfile(profile, 15, { from, to }) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function profileMarkdown(summary) {
  const lines = [
    `### CPU profile of ${summary.server} under load (\`node --cpu-prof\`)`,
    '',
    `${summary.rps ? `${Math.round(summary.rps).toLocaleString('en-US')} req/s while profiled; ` : ''}` +
      `${summary.seconds} s of load after a ${summary.warmupSeconds} s warm-up that is left out: busy ${summary.busyMs} ms, idle ${summary.idleMs} ms. Self time, % of busy time.`,
    '',
    '| # | function | location | self ms | % |',
    '| ---: | --- | --- | ---: | ---: |',
    ...summary.topFunctions.map((f, i) => `| ${i + 1} | \`${f.function}\` | ${f.location} | ${f.selfMs} | ${f.percent} |`),
    '',
    'Total (inclusive) time of chat-webhooks functions, % of busy time:',
    '',
    '| function | total ms | % |',
    '| --- | ---: | ---: |',
    ...summary.ourInclusive.map((f) => `| \`${f.function}\` | ${f.totalMs} | ${f.percent} |`),
    '',
    '| area (self time) | self ms | % |',
    '| --- | ---: | ---: |',
    ...summary.areas.map((a) => `| ${a.area} | ${a.selfMs} | ${a.percent} |`),
    '',
  ];
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [server = 'ours-node', seconds = '5'] = process.argv.slice(2);
  const loadgen = startChild('loadgen.mjs', [], { core: 1 });
  await loadgen.ready;
  try {
    const summary = await profileServer({ loadgen, server, kind: server === 'octokit' ? 'octokit' : 'chat', seconds: Number(seconds) });
    console.log(profileMarkdown(summary));
  } finally {
    await loadgen.stop();
  }
}
