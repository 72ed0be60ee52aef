/**
 * Micro benchmark of parsing, side by side in one process: `JSON.parse` alone, `parseWebhook` (JSON.parse,
 * envelope, compiled validator), and `JSON.parse` + zod `safeParse` of the same event schema, on compact
 * bodies: the ~1 KB message_sent fixture, a ~9 KB message_sent (long text and metadata), and a few other
 * triggers. Bytes input (UTF-8 decoding included) is measured too, for information.
 *
 *   npm run build && node bench/micro.mjs [rounds=20] [sliceMs=40]
 *
 * Each round runs every variant of every case for one time slice, in an order that rotates by round, so
 * drift (turbo boost, a noisy neighbour) hits all variants alike. A ratio is computed per round from slices
 * run back to back, and its median over rounds is reported. Writes bench/results/micro.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseWebhook } from '../dist/src/index.js';
import { eventSchemaOf } from '../dist/src/events/event-schema.js';

const rounds = Number(process.argv[2] ?? 20);
const sliceMs = Number(process.argv[3] ?? 40);
const targets = { message_sent_1KB: 0.85, message_sent_9KB: 0.9 };

const fixture = (trigger) => JSON.parse(readFileSync(new URL(`../fixtures/${trigger}.json`, import.meta.url), 'utf8'));

/** message_sent grown to ~9 KB the way real ones grow: a long text and extension metadata (link previews…). */
function largeMessageSent() {
  const event = fixture('message_sent');
  const content = event.data.message.data;
  const sentence = 'Suit is ready, the tower is secured and the briefing starts at ten; bring the schematics. ';
  content.text = sentence.repeat(30).trim();
  const links = [];
  const metadata = {
    '@injected': {
      extensions: {
        'link-preview': { links },
        'sentiment-analysis': { sentiment: 'neutral', score: 0.52 },
        'data-masking': { data: { sensitive_data: 'no', message_masked: content.text.slice(0, 120) } },
      },
    },
    incrementId: 1421,
    client: { platform: 'web', version: '4.1.2', locale: 'en-US' },
  };
  content.metadata = metadata;
  for (let i = 0; JSON.stringify(event).length < 9 * 1024 - 300; i++) {
    links.push({
      url: `https://news.example.com/2025/11/21/tower-briefing-${i}`,
      title: `Tower briefing, part ${i}: what the team needs to know before ten`,
      description: 'Schematics, schedules and the list of who brings what, in one place for the whole team.',
      image: `https://cdn.example.com/previews/tower-briefing-${i}.jpg`,
      favicon: 'https://news.example.com/favicon.ico',
      position: i,
    });
  }
  return event;
}

const cases = [
  { name: 'message_sent_1KB', trigger: 'message_sent', event: fixture('message_sent') },
  { name: 'message_sent_9KB', trigger: 'message_sent', event: largeMessageSent() },
  { name: 'group_member_added', trigger: 'group_member_added', event: fixture('group_member_added') },
  { name: 'call_participant_joined', trigger: 'call_participant_joined', event: fixture('call_participant_joined') },
  { name: 'message_edited', trigger: 'message_edited', event: fixture('message_edited') },
];

const utf8 = new TextDecoder('utf-8', { fatal: true });
let sink = 0;
for (const c of cases) {
  const text = JSON.stringify(c.event);
  const bytes = Buffer.from(text);
  const schema = eventSchemaOf(c.trigger);
  c.bytes = bytes.length;
  if (!schema.safeParse(c.event).success) throw new Error(`${c.name} is not a valid ${c.trigger} event`);
  c.variants = {
    'JSON.parse': () => JSON.parse(text),
    parseWebhook: () => parseWebhook(text),
    'JSON.parse+zod': () => schema.safeParse(JSON.parse(text)).success,
    'decode+JSON.parse (bytes)': () => JSON.parse(utf8.decode(bytes)),
    'parseWebhook(bytes)': () => parseWebhook(bytes),
  };
}
const variantNames = Object.keys(cases[0].variants);

/** Calls per second of `fn` over one slice; time is read every `batch` calls. */
function slice(fn, ms, batch = 50) {
  let calls = 0;
  const start = performance.now();
  let now = start;
  do {
    for (let i = 0; i < batch; i++) if (fn() === undefined) sink++;
    calls += batch;
    now = performance.now();
  } while (now - start < ms);
  return (calls * 1000) / (now - start);
}

// Warm-up: every variant reaches optimised code before anything is recorded.
for (const c of cases) for (const fn of Object.values(c.variants)) slice(fn, 150);

const samples = new Map(); // `${case}|${variant}` -> ops/s per round
for (let round = 0; round < rounds; round++) {
  for (const c of cases) {
    for (let k = 0; k < variantNames.length; k++) {
      const name = variantNames[(k + round) % variantNames.length];
      const key = `${c.name}|${name}`;
      if (!samples.has(key)) samples.set(key, []);
      samples.get(key).push(slice(c.variants[name], sliceMs));
    }
  }
  if (process.stderr.isTTY) process.stderr.write(`round ${round + 1}/${rounds}\r`);
}

const sorted = (values) => [...values].sort((a, b) => a - b);
const quantile = (values, q) => {
  const s = sorted(values);
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  return s[lo] + (s[Math.ceil(at)] - s[lo]) * (at - lo);
};
const stats = (values) => {
  const median = quantile(values, 0.5);
  return {
    median,
    q1: quantile(values, 0.25),
    q3: quantile(values, 0.75),
    min: Math.min(...values),
    max: Math.max(...values),
    // Half the interquartile range, relative to the median: how much a single slice moves.
    spread: (quantile(values, 0.75) - quantile(values, 0.25)) / 2 / median,
  };
};

const results = cases.map((c) => {
  const of = (name) => samples.get(`${c.name}|${name}`);
  const base = of('JSON.parse');
  const variants = {};
  for (const name of variantNames) {
    const values = of(name);
    variants[name] = {
      opsPerSec: stats(values),
      // Per round, against the JSON.parse slice of that same round; bytes variants against decode+JSON.parse.
      ratio: stats(values.map((v, r) => v / (name.endsWith('(bytes)') ? of('decode+JSON.parse (bytes)') : base)[r])),
    };
  }
  return { case: c.name, trigger: c.trigger, bytes: c.bytes, variants };
});

const fmtOps = (s) => `${Math.round(s.median).toLocaleString('en-US')} ±${(s.spread * 100).toFixed(1)}%`;
const fmtRatio = (s) => `${s.median.toFixed(2)}x`;
const columns = [
  ['case', (r) => r.case],
  ['bytes', (r) => r.bytes],
  ['JSON.parse ops/s', (r) => fmtOps(r.variants['JSON.parse'].opsPerSec)],
  ['parseWebhook ops/s', (r) => fmtOps(r.variants.parseWebhook.opsPerSec)],
  ['parseWebhook / JSON.parse', (r) => fmtRatio(r.variants.parseWebhook.ratio)],
  ['JSON.parse+zod ops/s', (r) => fmtOps(r.variants['JSON.parse+zod'].opsPerSec)],
  ['JSON.parse+zod / JSON.parse', (r) => fmtRatio(r.variants['JSON.parse+zod'].ratio)],
  ['parseWebhook(bytes) / decode+JSON.parse', (r) => fmtRatio(r.variants['parseWebhook(bytes)'].ratio)],
];
const lines = [
  `| ${columns.map(([title]) => title).join(' | ')} |`,
  `|---|${columns.slice(1).map(() => '---:').join('|')}|`,
  ...results.map((r) => `| ${columns.map(([, cell]) => cell(r)).join(' | ')} |`),
];
const verdicts = [];
for (const r of results) {
  const target = targets[r.case];
  const ratio = r.variants.parseWebhook.ratio;
  const label = r.case.replace(/^message_sent_/, '');
  const range = `interquartile ${ratio.q1.toFixed(2)}–${ratio.q3.toFixed(2)} over ${rounds} rounds`;
  if (target === undefined) {
    verdicts.push(`parseWebhook/JSON.parse ${label}: ${ratio.median.toFixed(2)}x (${range})`);
  } else {
    const met = ratio.median >= target;
    verdicts.push(
      `parseWebhook/JSON.parse ${label}: ${ratio.median.toFixed(2)}x (target ≥${target}x, ${met ? 'met' : 'MISSED'}; ${range})`,
    );
  }
}
for (const r of results) {
  verdicts.push(`JSON.parse+zod/JSON.parse ${r.case}: ${r.variants['JSON.parse+zod'].ratio.median.toFixed(2)}x`);
}

console.log(lines.join('\n'));
console.log();
console.log(verdicts.join('\n'));

const cpus = os.cpus();
const report = {
  date: new Date().toISOString(),
  node: process.version,
  v8: process.versions.v8,
  cpu: cpus[0]?.model,
  cpus: cpus.length,
  rounds,
  sliceMs,
  targets,
  results,
  verdicts,
};
const dir = new URL('./results/', import.meta.url);
mkdirSync(dir, { recursive: true });
writeFileSync(new URL('micro.json', dir), `${JSON.stringify(report, null, 2)}\n`);
if (sink < 0) console.log(sink);
