/**
 * `node bench/count-check.mjs`: fails when the node:http receiver (`ours-node`) does more work per request than
 * the figure committed in bench/results/count-baseline.json allows (issue 27, item 4). CI runs it (.ci/run).
 *
 * It counts instructions (callgrind without cache simulation: the simulated caches take their sizes from the
 * host's CPU, instructions do not) over one keep-alive connection, one request at a time: with many connections
 * the number of requests node reads per turn of its event loop, and so the work per request, depends on how fast
 * the host runs; with one, every request takes the same path. The count is the server process's, all its
 * threads; the kernel's work is not in it. V8 runs with `--predictable` (no background compiler or collector
 * threads): with them, three runs of the same code on a busy host counted 445–498 k. Runs still spread by
 * 2–3 % (386–396 k at a load average of 2–4), and a host much busier than that counts more (433–440 k at 13:
 * collections and tasks that follow the clock fall on fewer requests), hence a tolerance of 4 % over a figure
 * recorded on a quiet host. Each run takes about 40 s of CPU.
 *
 *   node bench/count-check.mjs                 # check against the committed figure
 *   node bench/count-check.mjs --record --runs 5   # measure 5 times, commit the median and the spread
 *
 * The committed figure holds for the Node version and the CPU model it was measured on: elsewhere (V8 compiles
 * the same code differently, glibc picks other copy routines) the check prints the count and passes, and
 * `--record` there sets a new figure.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { measureServer } from './lib/callgrind.mjs';

const { values } = parseArgs({
  options: {
    record: { type: 'boolean', default: false },
    runs: { type: 'string', default: '1' },
    tolerance: { type: 'string' },
  },
});
const FILE = new URL('results/count-baseline.json', import.meta.url);
/** V8 picks instructions by the CPU's features, and glibc its copy routines: counts compare on one kind of CPU. */
const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
/** Enough warm-up for V8 to have optimised the path; enough counted requests to average out a scavenge or two. */
const WORKLOAD = { warmup: 3000, requests: 2000, connections: 1, simulate: false, nodeFlags: ['--predictable'] };

const counts = [];
for (let run = 0; run < Number(values.runs); run += 1) {
  const { instructions } = await measureServer('ours-node', WORKLOAD);
  counts.push(instructions);
  console.log(`ours-node: ${Math.round(instructions).toLocaleString('en-US')} instructions/request`);
}
const sorted = [...counts].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)];

if (values.record) {
  const spread = (sorted.at(-1) - sorted[0]) / median;
  const baseline = {
    node: process.version,
    cpu,
    workload: WORKLOAD,
    instructionsPerRequest: Math.round(median),
    runs: counts.map(Math.round),
    spread: Number(spread.toFixed(4)),
    // A regression must stand clear of the run-to-run spread.
    tolerance: Number(values.tolerance ?? 0.04),
  };
  writeFileSync(FILE, `${JSON.stringify(baseline, null, 2)}\n`);
  console.log(`recorded ${baseline.instructionsPerRequest} (spread ${(spread * 100).toFixed(2)} % over ${counts.length} runs)`);
} else {
  const baseline = JSON.parse(readFileSync(FILE, 'utf8'));
  const limit = baseline.instructionsPerRequest * (1 + baseline.tolerance);
  const change = `${((median / baseline.instructionsPerRequest - 1) * 100).toFixed(2)} %`;
  if (baseline.node !== process.version || baseline.cpu !== cpu) {
    console.log(
      `count-check: the committed figure is for node ${baseline.node} on ${baseline.cpu}, this is ${process.version} on ${cpu}: ` +
        `not compared (${change}); record one for this kind of machine with --record --runs 5.`,
    );
  } else if (median > limit) {
    console.error(
      `count-check: ours-node does ${Math.round(median)} instructions per request, ${change} over the committed ` +
        `${baseline.instructionsPerRequest} (tolerance ${baseline.tolerance * 100} %). If the extra work is wanted, ` +
        'record a new figure: node bench/count-check.mjs --record --runs 5',
    );
    process.exit(1);
  } else {
    console.log(`count-check: ${Math.round(median)} instructions per request, ${change} against the committed ${baseline.instructionsPerRequest}: within ${baseline.tolerance * 100} %.`);
  }
}
