// The import rules of docs/design.md's "Layout": each folder imports only from the folders listed for it.
// `npm run check:imports` runs them (also in .ci/run), so a wrong-way import fails CI.
// The public entries are read from package.json's `exports`, so a new subpath is covered as it is added.
const { exports: exportsMap } = require('./package.json');

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Source files behind the published subpaths: ./dist/src/index.js is src/index.ts. */
const publicEntries = Object.values(exportsMap)
  .map((target) => (typeof target === 'string' ? target : (target.import?.default ?? target.default)))
  .filter((target) => target.startsWith('./dist/'))
  .map((target) => `^${escape(target.slice('./dist/'.length).replace(/\.js$/, '.ts'))}$`);

const ours = '^(src|adapters)/';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'No import cycle, type-only imports included.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'events-imports-zod-only',
      severity: 'error',
      comment: 'src/events/ holds the registry, records and event types: it imports zod and nothing else.',
      from: { path: '^src/events/' },
      to: { pathNot: ['^src/events/', '^node_modules/zod/'] },
    },
    {
      name: 'registry-never-imports-event-types',
      severity: 'error',
      comment: 'Event types derive from the registry, never the other way round.',
      from: { path: '^src/events/registry\\.ts$' },
      to: { path: '^src/events/types\\.ts$' },
    },
    {
      name: 'platform-imports-nothing-of-ours',
      severity: 'error',
      comment: 'src/platform/ is the runtime seam: it imports only runtime modules.',
      from: { path: '^src/platform/' },
      to: { path: ours, pathNot: '^src/platform/' },
    },
    {
      name: 'node-builtins-only-in-platform',
      severity: 'error',
      comment:
        'The core runs on Workers, Deno and Bun too: node:* (and Buffer-based packages) only behind #platform, ' +
        'whose package.json "imports" conditions pick src/platform/node.ts or web.ts. The SQLite inbox is ' +
        'Node-only by nature (better-sqlite3, a file path), and so are its fsync and checkpoint helpers; the Redis ' +
        "inbox (ioredis) reads its Lua scripts, files beside src/inbox/redis/scripts.ts.",
      from: { path: '^src/(events|receive|inbox|api|telemetry)/', pathNot: '^src/inbox/(sqlite|file-sync|checkpointer|redis/scripts)\\.ts$' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'receive-imports-events-platform-inbox-port',
      severity: 'error',
      comment: 'src/receive/ builds on events, platform and text, and knows the inbox only through its port, telemetry only through its hooks.',
      from: { path: '^src/receive/' },
      to: { path: ours, pathNot: ['^src/(receive|events|platform|text)/', '^src/inbox/port\\.ts$', '^src/telemetry/hooks\\.ts$'] },
    },
    {
      name: 'telemetry-imports-events-receive-api',
      severity: 'error',
      comment: "src/telemetry/ imports events and receive's public face; its hooks (imported by src/receive/) import events only.",
      from: { path: '^src/telemetry/' },
      to: { path: ours, pathNot: ['^src/(telemetry|events)/', '^src/receive/index\\.ts$'] },
    },
    {
      name: 'telemetry-hooks-import-events-only',
      severity: 'error',
      from: { path: '^src/telemetry/hooks\\.ts$' },
      to: { path: ours, pathNot: ['^src/events/'] },
    },
    {
      name: 'opentelemetry-only-in-otel',
      severity: 'error',
      comment: 'The core stays free of dependencies: only src/telemetry/otel.ts imports @opentelemetry/*.',
      from: { pathNot: '^src/telemetry/otel\\.ts$' },
      to: { path: 'node_modules/@opentelemetry/' },
    },
    {
      name: 'inbox-imports-events-platform-receive-api',
      severity: 'error',
      comment: "src/inbox/ imports events, platform and receive's public face (src/receive/index.ts).",
      from: { path: '^src/inbox/' },
      to: { path: ours, pathNot: ['^src/(inbox|events|platform)/', '^src/receive/index\\.ts$'] },
    },
    {
      name: 'api-imports-events-platform',
      severity: 'error',
      comment: 'src/api/ (the REST clients) imports the records of src/events/ and the shared backoff of src/platform/, nothing else of ours.',
      from: { path: '^src/api/' },
      to: { path: ours, pathNot: ['^src/(api|events|platform)/'] },
    },
    {
      name: 'testing-imports-public-entries',
      severity: 'error',
      comment: 'src/testing/ is written as a user would: it imports the public entries only.',
      from: { path: '^src/testing/' },
      to: { path: ours, pathNot: ['^src/testing/', ...publicEntries] },
    },
    {
      name: 'cli-imports-public-entries',
      severity: 'error',
      comment: 'src/cli/ is a user of the package: it imports the public entries only (and src/text/, wording helpers the receiver shares).',
      from: { path: '^src/cli/' },
      to: { path: ours, pathNot: ['^src/(cli|text)/', ...publicEntries] },
    },
    {
      name: 'text-imports-nothing-of-ours',
      severity: 'error',
      comment: 'src/text/ holds wording helpers (did you mean) that the receiver and the CLI share: a leaf.',
      from: { path: '^src/text/' },
      to: { path: ours, pathNot: '^src/text/' },
    },
    {
      name: 'nothing-imports-testing-or-cli',
      severity: 'error',
      comment: 'Test helpers and the CLI sit on top: nothing in src/ or adapters/ imports them.',
      from: { path: ours, pathNot: '^src/(testing|cli)/' },
      to: { path: '^src/(testing|cli)/' },
    },
    {
      name: 'cli-is-imported-by-nobody',
      severity: 'error',
      from: { path: '^src/testing/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'core-knows-no-adapter',
      severity: 'error',
      comment: 'The core knows no framework: src/ imports adapters only as a user would (testing, cli).',
      from: { path: '^src/', pathNot: '^src/(testing|cli)/' },
      to: { path: '^adapters/' },
    },
    {
      name: 'adapters-import-receive-public-api',
      severity: 'error',
      comment: "Adapters only translate: they import receive's public face (src/receive/index.ts), nothing deeper.",
      from: { path: '^adapters/' },
      to: { path: '^src/', pathNot: '^src/receive/index\\.ts$' },
    },
    {
      name: 'adapters-import-own-folder-and-shared',
      severity: 'error',
      comment: 'An adapter imports its own folder and adapters/shared/, never another adapter.',
      from: { path: '^adapters/([^/]+)/' },
      to: { path: '^adapters/', pathNot: ['^adapters/$1/', '^adapters/shared/'] },
    },
    {
      name: 'aws-sdk-only-in-adapters-aws',
      severity: 'error',
      comment:
        'The AWS SDK clients are optional peers behind chat-webhooks/aws: the core and the other adapters never ' +
        'import them (not even their types), so nobody else needs them installed.',
      from: { path: ours, pathNot: '^adapters/aws/' },
      to: { path: '(^|/)node_modules/@aws-sdk/' },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve is a typo or a missing dependency.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // TypeScript 7 has no JavaScript API for dependency-cruiser's tsc parser; swc parses TypeScript,
    // type-only imports included.
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      // chat-webhooks-source: #platform resolves to src/platform/node.ts, as for tsc (tsconfig.json customConditions).
      conditionNames: ['chat-webhooks-source', 'import', 'types', 'default'],
      exportsFields: ['exports'],
      mainFields: ['module', 'main', 'types'],
    },
  },
};
