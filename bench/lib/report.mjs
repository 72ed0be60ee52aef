/**
 * Rendering of a run: the console table and target lines, bench/results/latest.md, and the hand-made SVG bar
 * chart of the ratios (no chart library).
 */

const int = (value) => (value === null || value === undefined ? '—' : Math.round(value).toLocaleString('en-US'));
const x = (value, digits = 2) => (value === null || value === undefined ? '—' : `${value.toFixed(digits)}x`);
const ratioCell = (r) => (r ? `${x(r.value)} (${x(r.perRoundMin)}–${x(r.perRoundMax)})` : '—');

function targetCells(row) {
  const targets = [];
  const met = [];
  for (const r of [row.vsBare, row.vsOctokit]) {
    if (!r || r.target === null || r.target === undefined || row.name.startsWith('bare')) continue;
    targets.push(`≥${r.target}x ${r.kind === 'octokit' ? 'octokit' : 'bare'}`);
    met.push(r.met ? 'yes' : '**NO**');
  }
  return [targets.join(', ') || '—', met.join(', ') || '—'];
}

function tableRows(rows, { markdown }) {
  const header = ['server', 'median', 'spread (min–max)', 'ratio vs bare (per-round range)', 'ratio vs octokit', 'target', 'met?'];
  const body = rows.map((row) => {
    const [target, met] = targetCells(row);
    return [
      markdown ? `${row.name}<br><sub>${row.label}</sub>` : row.name,
      `${int(row.summary.median)} ${row.unit}`,
      `${int(row.summary.min)}–${int(row.summary.max)}`,
      ratioCell(row.vsBare),
      row.unit === 'inv/s' ? 'n/a (no HTTP)' : row.vsOctokit ? x(row.vsOctokit.value) : '—',
      target,
      markdown ? met : met.replaceAll('**', ''),
    ];
  });
  return [header, ...body];
}

/** One line per target: `nodeMiddleware / bare node:http: 0.91x (target ≥0.85x) MET`. */
export function targetLines(result) {
  const lines = [];
  for (const r of result.ratios) {
    if (r.target === null) continue;
    const cpu = r.cpuRatio ? `, CPU-time ratio ${x(r.cpuRatio)}` : '';
    lines.push(`${r.label}: ${x(r.value)} (target ≥${r.target}x; rounds ${x(r.perRoundMin)}–${x(r.perRoundMax)}${cpu}) ${r.met ? 'MET' : 'MISSED'}`);
  }
  for (const m of result.memory) {
    lines.push(
      `${m.server} memory: RSS ${m.rssAfterWarmupMB} → ${m.rssEndMB} MB over ${m.requests} requests after warm-up ` +
        `(end − start ${m.rssGrowthMB} MB; later peaks ${m.rssPeakGrowthMB} MB vs earlier, target < 5 MB; ` +
        `heap after GC ${m.heapAfterGcWarmupMB} → ${m.heapAfterGcEndMB} MB, target < +1 MB) ${m.flat ? 'MET' : 'MISSED'}`,
    );
  }
  for (const c of result.checks) {
    lines.push(
      `${c.server} handler calls: ${c.handlerCalls} for ${c.ok} 2xx (${c.inFlightAtStop} in flight at the stops, ≤${c.allowedInFlight} allowed), ` +
        `non-2xx/errors ${c.non2xxOrErrors}, onError ${c.receiverErrors} ${c.passed ? 'OK' : 'FAILED'}`,
    );
  }
  return lines;
}

export function printTable(result, rows) {
  const table = tableRows(rows, { markdown: false });
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => String(row[i]).length)));
  for (const [i, row] of table.entries()) {
    console.log(row.map((cell, j) => String(cell).padEnd(widths[j])).join('  '));
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
  console.log('');
  for (const line of targetLines(result)) console.log(line);
}

function mdTable(table) {
  const [header, ...body] = table;
  return [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...body.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}

export function markdownReport(result, rows) {
  const pinned = result.machine.pinned
    ? `servers on core ${result.machine.pinned.server}, autocannon on core ${result.machine.pinned.loadGenerator} (taskset)`
    : 'not pinned (no taskset or a single core)';
  const c = result.config;
  const lines = [
    '# chat-webhooks HTTP benchmarks: latest run',
    '',
    result.git
      ? `Library at commit \`${result.git.commit.slice(0, 10)}\` (${result.git.subject.length > 90 ? `${result.git.subject.slice(0, 89)}…` : result.git.subject})${result.git.uncommittedLibraryChanges.length ? `, with uncommitted changes in ${result.git.uncommittedLibraryChanges.length} file(s) of src/ or adapters/ when dist/ was built` : ''}.`
      : '',
    '',
    `${result.date} · node ${result.node} (V8 ${result.v8}) · ${result.machine.cpus} × ${result.machine.cpuModel} · ${result.machine.platform} · ${pinned} · ` +
      `${c.rounds} interleaved rounds × ${c.seconds} s after a ${c.warmupSeconds} s warm-up, ${c.connections} connections, keep-alive, no pipelining` +
      `${c.quick ? ' · **BENCH_QUICK** (short run)' : ''} · autocannon ${result.versions.autocannon}, fastify ${result.versions.fastify}, express ${result.versions.express}, @octokit/webhooks ${result.versions['@octokit/webhooks']}.`,
    '',
    `Body: ${result.body.chat}; octokit: ${result.body.octokit}. Medians of the rounds; ratios are ratios of medians, with the range of the per-round side-by-side ratios. Lambda rows are in-process invocations per second, one at a time (not HTTP).`,
    '',
    mdTable(tableRows(rows, { markdown: true })),
    '',
    '![ratios](ratios.svg)',
    '',
    '## Targets',
    '',
    ...targetLines(result).map((line) => `- ${line.replace(/ (MET|MISSED|OK|FAILED)$/, (_, word) => ` **${word}**`)}`),
    '',
    '## Diagnostics',
    '',
    'Server CPU per request is the server process\'s user+system CPU time over the run divided by the 2xx count: it does not depend on the load generator. The CPU-time ratio (bare µs/req ÷ ours) is the throughput ratio a CPU-bound server would reach, a cross-check of the req/s ratio that the load generator cannot distort. "Server busy" is its event-loop utilization; below ~95% the load generator (or something else) held it back. "Others" is CPU used during the run by processes outside the benchmark (max over rounds, in cores).',
    '',
    mdTable([
      ['server', 'server CPU µs/req', 'CPU-time ratio vs bare', 'server busy', 'autocannon CPU', 'latency p50 / p99 ms', 'others (cores)'],
      ...Object.entries(result.servers).map(([name, { summary: s }]) => [
        name,
        s.cpuUsPerRequest?.toFixed(1),
        x(result.ratios.find((r) => r.kind === 'bare' && r.server === name)?.cpuRatio),
        `${(s.serverBusy * 100).toFixed(0)}%`,
        `${(s.loadgenCpu * 100).toFixed(0)}%`,
        `${s.latencyP50} / ${s.latencyP99}`,
        s.foreignCoresMax === null ? 'n/a' : s.foreignCoresMax.toFixed(2),
      ]),
    ]),
    '',
  ];
  if (result.lambda) {
    const { bare, ours } = result.lambda.summary;
    lines.push(
      `Lambda, per invocation: bare ${bare.usPerInvocation.toFixed(1)} µs, lambdaHandler ${ours.usPerInvocation.toFixed(1)} µs ` +
        `(+${(ours.usPerInvocation - bare.usPerInvocation).toFixed(1)} µs; lambdaHandler also waits for the handlers, which the receiver starts on the next tick after the answer).`,
      '',
    );
  }
  lines.push(
    '## Memory',
    '',
    `Fresh server per adapter (\`--expose-gc\`): ${c.memoryWarmup} warm-up requests (more than the receiver's 10 000-key dedupe window holds), \`gc()\` for the retained-heap baseline, ${c.memorySettle} more requests so the young generation grows back, then one run of ${c.memoryRequests} requests during which the server records \`process.memoryUsage()\` every ${c.memoryStep} handler calls. Under load RSS is a sawtooth (the heap grows until a major GC), so "end − start" depends on where the last sample falls; flat means the peaks of the second half of the samples are < 5 MB above those of the first half and the heap after a forced GC grew < 1 MB.`,
    '',
    mdTable([
      ['server', 'RSS after warm-up', 'RSS at end', 'RSS min–max', 'later peaks vs earlier', 'heap after GC (warm-up → end)', 'handler calls = 2xx', 'flat?'],
      ...result.memory.map((m) => [
        m.server,
        `${m.rssAfterWarmupMB} MB`,
        `${m.rssEndMB} MB`,
        `${m.rssMinMB}–${m.rssMaxMB} MB`,
        `${m.rssPeakGrowthMB >= 0 ? '+' : ''}${m.rssPeakGrowthMB} MB`,
        `${m.heapAfterGcWarmupMB} → ${m.heapAfterGcEndMB} MB`,
        `${m.check.handlerCalls} = ${m.check.ok} ${m.check.passed ? '✓' : '✗'}`,
        m.flat ? 'yes' : '**NO**',
      ]),
    ]),
    '',
    'Allocation per request: a server with a 256 MB young generation (no scavenge during a batch, checked with a GC observer), `gc()` before each of two batches (n₁ < n₂ requests, 10 connections); per request = (Δheap₂ − Δheap₁) / (n₂ − n₁), which cancels per-batch costs such as connection set-up. "External" is Buffer/ArrayBuffer memory outside the JS heap, measured the same way.',
    '',
    mdTable([
      ['server', 'JS heap per request', 'external per request'],
      ...result.allocation.map((a) => [
        a.server,
        a.heapBytesPerRequest === null ? a.note : `${(a.heapBytesPerRequest / 1024).toFixed(1)} KB`,
        a.externalBytesPerRequest === undefined ? '—' : `${(a.externalBytesPerRequest / 1024).toFixed(1)} KB`,
      ]),
    ]),
    '',
  );
  if (result.profile) lines.push('## CPU profile', '', 'See [profile.md](profile.md).', '');
  if (result.micro?.ran) lines.push(`Micro suite (bench/micro.mjs) ran first: exit ${result.micro.exitCode}, ${result.micro.seconds} s; its output is on the console.`, '');
  return `${lines.join('\n')}\n`;
}

const escape = (text) => String(text).replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** Horizontal bars, one per ratio, with the row's target as a dashed mark and parity (1x) as a grey line. */
export function ratiosSvg(result) {
  const bars = result.ratios.filter(Boolean);
  const rowHeight = 30;
  const labelWidth = 420;
  const chartWidth = 460;
  const top = 50;
  const height = top + bars.length * rowHeight + 40;
  const width = labelWidth + chartWidth + 90;
  const maxValue = Math.max(2.5, ...bars.map((b) => Math.max(b.value, b.target ?? 0))) * 1.08;
  const scale = (value) => Math.round((labelWidth + (value / maxValue) * chartWidth) * 10) / 10;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="13">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="16" y="24" font-size="16" font-weight="600">chat-webhooks throughput ratios (medians, ${escape(result.node)}, ${escape(result.date.slice(0, 10))})</text>`,
    `<text x="16" y="42" fill="#555">bar: measured ratio · dashed mark: target · green met, red missed, blue no target</text>`,
  ];
  for (let tick = 0; tick <= maxValue; tick += 0.5) {
    const px = scale(tick);
    parts.push(`<line x1="${px}" y1="${top - 4}" x2="${px}" y2="${top + bars.length * rowHeight}" stroke="${tick === 1 ? '#999' : '#eee'}" stroke-width="1"/>`);
    parts.push(`<text x="${px}" y="${top + bars.length * rowHeight + 16}" text-anchor="middle" fill="#555">${tick}x</text>`);
  }
  bars.forEach((bar, i) => {
    const y = top + i * rowHeight;
    const color = bar.met === null || bar.met === undefined ? '#3b73b9' : bar.met ? '#2e9b4f' : '#d0453a';
    parts.push(`<text x="${labelWidth - 10}" y="${y + 19}" text-anchor="end">${escape(bar.label)}</text>`);
    parts.push(`<rect x="${labelWidth}" y="${y + 6}" width="${Math.max(1, scale(bar.value) - labelWidth)}" height="${rowHeight - 12}" fill="${color}" rx="2"/>`);
    // Per-round spread as a whisker.
    parts.push(`<line x1="${scale(bar.perRoundMin)}" y1="${y + 15}" x2="${scale(bar.perRoundMax)}" y2="${y + 15}" stroke="#222" stroke-width="1.5"/>`);
    parts.push(`<text x="${scale(Math.max(bar.value, bar.perRoundMax, bar.target ?? 0)) + 8}" y="${y + 19}">${bar.value.toFixed(2)}x</text>`);
    if (bar.target !== null && bar.target !== undefined) {
      const px = scale(bar.target);
      parts.push(`<line x1="${px}" y1="${y + 2}" x2="${px}" y2="${y + rowHeight - 2}" stroke="#000" stroke-width="2" stroke-dasharray="4 3"/>`);
    }
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
