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
      comment: 'src/events/ holds the registry, records, event types and keys: it imports zod and the platform, nothing else.',
      from: { path: '^src/events/' },
      to: { pathNot: ['^src/(events|platform)/', '(^|/)node_modules/zod/'] },
    },
    {
      name: 'generated-validators-import-no-zod',
      severity: 'error',
      comment: 'The validators generated at build time answer without zod: they import their helpers and types only.',
      from: { path: '^src/events/(generated/|validation\\.ts$)' },
      to: { path: '(^|/)node_modules/zod/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'registry-never-imports-event-types',
      severity: 'error',
      comment: 'Event types derive from the registry, never the other way round.',
      from: { path: '^src/events/registry\\.ts$' },
      to: { path: '^src/events/types\\.ts$' },
    },
    {
      name: 'compile-imports-zod-only',
      severity: 'error',
      comment:
        "src/compile/ turns zod schemas into validators: it imports zod and the helpers the validators call " +
        '(src/events/validation.ts, shared with the ones generated at build time), nothing else.',
      from: { path: '^src/compile/' },
      to: { pathNot: ['^src/compile/', '^src/events/validation\\.ts$', '(^|/)node_modules/zod/'] },
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
        "inbox (ioredis) reads its Lua scripts, files beside src/stores/redis/scripts.ts.",
      from: { path: '^src/(events|compile|dispatch|delivery|receive|stores|api|telemetry)/', pathNot: '^src/stores/(sqlite/.*|redis/scripts\\.ts)$' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'dispatch-imports-events-platform-text-hooks',
      severity: 'error',
      comment: "src/dispatch/ (handlers, the dispatcher, errors, logger) sits below the receiver and the worker: events, platform, text and telemetry's hooks.",
      from: { path: '^src/dispatch/' },
      to: { path: ours, pathNot: ['^src/(dispatch|events|platform|text)/', '^src/telemetry/hooks\\.ts$'] },
    },
    {
      name: 'delivery-imports-dispatch-and-below',
      severity: 'error',
      comment: "src/delivery/ (the Inbox port, the worker loop) builds on dispatch, events, platform, text and telemetry's hooks; never on the receiver.",
      from: { path: '^src/delivery/' },
      to: { path: ours, pathNot: ['^src/(delivery|dispatch|events|platform|text)/', '^src/telemetry/hooks\\.ts$'] },
    },
    {
      name: 'stores-import-the-port-only',
      severity: 'error',
      comment: 'A store knows the delivery room only through its port and stored events, and the platform: never the worker, the receiver or dispatch.',
      from: { path: '^src/stores/' },
      to: { path: ours, pathNot: ['^src/(stores|platform)/', '^src/delivery/(port|stored-event)\\.ts$'] },
    },
    {
      name: 'receive-imports-rooms-below',
      severity: 'error',
      comment: "src/receive/ builds on events, compile, platform, text, dispatch and delivery, and knows telemetry only through its hooks.",
      from: { path: '^src/receive/' },
      to: { path: ours, pathNot: ['^src/(receive|events|compile|platform|text|dispatch|delivery)/', '^src/telemetry/hooks\\.ts$'] },
    },
    {
      name: 'telemetry-imports-its-hooks-and-below',
      severity: 'error',
      comment: 'src/telemetry/ imports its hooks, events and the platform: never the receiver or the worker.',
      from: { path: '^src/telemetry/' },
      to: { path: ours, pathNot: ['^src/(telemetry|events|platform)/'] },
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
      comment: 'The core stays free of dependencies: only src/telemetry/otel/ imports @opentelemetry/*.',
      from: { pathNot: '^src/telemetry/otel/' },
      to: { path: 'node_modules/@opentelemetry/' },
    },
    {
      name: 'api-imports-events-platform-only',
      severity: 'error',
      comment: 'src/api/ (the REST clients) imports the records of src/events/ and the platform (the shared backoff), nothing else of ours.',
      from: { path: '^src/api/' },
      to: { path: ours, pathNot: ['^src/(api|events|platform)/'] },
    },
    {
      name: 'reconcile-imports-public-faces',
      severity: 'error',
      comment: "src/reconcile/ sits above the receiver and the REST client: it imports their public faces (receive/ and api/ index.ts), the platform (the wait between tries) and nothing else of ours.",
      from: { path: '^src/reconcile/' },
      to: { path: ours, pathNot: ['^src/(reconcile|platform)/', '^src/(receive|api)/index\\.ts$', '^src/telemetry/hooks\\.ts$'] },
    },
    {
      name: 'nothing-below-imports-reconcile',
      severity: 'error',
      comment:
        'The receiver, the clients and every room below never import reconcile: only the CLI (a user of its public entry) does, and the ' +
        "main entry, for the package's createWebhooks (src/reconcile/create-webhooks.ts, which loads the rest of reconcile lazily, for catchUp's plain form).",
      from: { path: ours, pathNot: ['^src/(reconcile|cli)/', '^src/index\\.ts$'] },
      to: { path: '^src/reconcile/' },
    },
    {
      name: 'main-entry-loads-no-reconcile',
      severity: 'error',
      comment:
        "Of reconcile, the main entry imports only the package's createWebhooks, and that file loads the rest with import() at a " +
        "catch-up's first call: a receiver without catchUp never loads it. (Its type import of catch-up.ts, which swc reports as " +
        'an import, is erased by the compiler; test/cold/entry-sizes.test.ts would see a real one.)',
      from: { path: '^src/(index|reconcile/create-webhooks)\\.ts$' },
      to: { path: '^src/reconcile/', pathNot: '^src/reconcile/(create-webhooks|catch-up)\\.ts$', dependencyTypesNot: ['dynamic-import'] },
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
      name: 'adapters-import-public-faces',
      severity: 'error',
      comment: "Adapters only translate: they import the rooms' public faces (each index.ts) and the platform, nothing deeper.",
      from: { path: '^adapters/' },
      to: { path: '^src/', pathNot: ['^src/index\\.ts$', '^src/(receive|dispatch|delivery|events)/index\\.ts$', '^src/platform/'] },
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
