/**
 * `node bench/count-check.mjs`: fails when the node:http receiver (`ours-node`) does more work per request than
 * the figure committed in bench/results/count-baseline.json allows (issue 27, item 4). CI runs it (.ci/run).
 *
 * It counts instructions (callgrind without cache simulation: the simulated caches take their sizes from the
 * host's CPU, instructions do not) over one keep-alive connection, one request at a time: with many connections
 * the number of requests node reads per turn of its event loop, and so the work per request, depends on how fast
 * the host runs; with one, every request takes the same path. The count is the server process's, all its
 * threads; the kernel's work is not in it. V8 runs with `--predictable` (no background compiler or collector
 * threads).
 *
 * Even so the count follows the host's pace: collections and tasks that follow the clock fall on fewer requests
 * when the host is slow (ours counted 386–396 k at a load average of 2–4 and 433–440 k at 13, +11 %, which an
 * absolute bound either lets through or fails on a busy CI machine). So each run also counts bare node:http
 * (bench/servers.mjs's `bare-node`) right before ours, and what is compared is ours scaled by how far bare moved
 * from its committed figure: `ours × bareCommitted / bare`. The host's pace moves both; a change to the receiver
 * moves only ours. Each server takes about 40 s of CPU.
 *
 *   node bench/count-check.mjs                 # check against the committed figure
 *   node bench/count-check.mjs --record --runs 5   # measure 5 times, commit the medians and the spread
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
function format(n) {
  return Math.round(n).toLocaleString('en-US');
}
const FILE = new URL('results/count-baseline.json', import.meta.url);
/** V8 picks instructions by the CPU's features, and glibc its copy routines: counts compare on one kind of CPU. */
const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
/** Enough warm-up for V8 to have optimised the path; enough counted requests to average out a scavenge or two. */
const WORKLOAD = { warmup: 3000, requests: 2000, connections: 1, simulate: false, nodeFlags: ['--predictable'] };

const median = (numbers) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)];
const ratio = (run) => run.ours / run.bare;

/** One run: bare node:http, then ours, under the same conditions. */
const runs = [];
for (let run = 0; run < Number(values.runs); run += 1) {
  const bare = (await measureServer('bare-node', WORKLOAD)).instructions;
  const ours = (await measureServer('ours-node', WORKLOAD)).instructions;
  runs.push({ bare, ours });
  console.log(`bare-node: ${format(bare)}, ours-node: ${format(ours)} instructions/request (ours ÷ bare ${ratio({ bare, ours }).toFixed(4)})`);
}
if (values.record) {
  const ratios = runs.map(ratio);
  const spread = (Math.max(...ratios) - Math.min(...ratios)) / median(ratios);
  const baseline = {
    node: process.version,
    cpu,
    workload: WORKLOAD,
    instructionsPerRequest: Math.round(median(runs.map((r) => r.ours))),
    bareInstructionsPerRequest: Math.round(median(runs.map((r) => r.bare))),
    runs: runs.map((r) => ({ bare: Math.round(r.bare), ours: Math.round(r.ours) })),
    // The spread of ours ÷ bare over the runs: what the tolerance must stand clear of.
    spread: Number(spread.toFixed(4)),
    tolerance: Number(values.tolerance ?? 0.03),
  };
  writeFileSync(FILE, `${JSON.stringify(baseline, null, 2)}\n`);
  console.log(
    `recorded ours ${format(baseline.instructionsPerRequest)}, bare ${format(baseline.bareInstructionsPerRequest)} ` +
      `(spread of ours ÷ bare ${(spread * 100).toFixed(2)} % over ${runs.length} runs)`,
  );
} else {
  const baseline = JSON.parse(readFileSync(FILE, 'utf8'));
  const { bare, ours } = [...runs].sort((a, b) => ratio(a) - ratio(b))[Math.floor(runs.length / 2)];
  const scaled = (ours * baseline.bareInstructionsPerRequest) / bare;
  const limit = baseline.instructionsPerRequest * (1 + baseline.tolerance);
  const change = `${((scaled / baseline.instructionsPerRequest - 1) * 100).toFixed(2)} %`;
  const measured = `ours-node does ${format(ours)} instructions per request where bare node:http does ${format(bare)}: ${format(scaled)} at the committed bare figure, ${change} against the committed ${format(baseline.instructionsPerRequest)}`;
  if (baseline.node !== process.version || baseline.cpu !== cpu) {
    console.log(
      `count-check: the committed figure is for node ${baseline.node} on ${baseline.cpu}, this is ${process.version} on ${cpu}: ` +
        `not compared (${measured}); record one for this kind of machine with --record --runs 5.`,
    );
  } else if (scaled > limit) {
    console.error(
      `count-check: ${measured}, over the tolerance of ${baseline.tolerance * 100} %. If the extra work is wanted, ` +
        'record a new figure: node bench/count-check.mjs --record --runs 5',
    );
    process.exit(1);
  } else {
    console.log(`count-check: ${measured}: within ${baseline.tolerance * 100} %.`);
  }
}
