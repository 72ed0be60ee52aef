// The mutation profiles, by name (`npm run mutate -- <profile> [stryker flags]`): which files a run mutates and
// which suites judge each mutant. A profile's suites are the ones that reach its files and nothing more: a suite
// that never reaches them only lengthens every mutant's run. Narrower is stricter, not looser: a mutant that only
// a suite left out would kill counts as a survivor.
//
// Each entry: `mutate` (Stryker's globs), `tests` (vitest's include), optionally `vitest` (more of vitest's test
// options) and `dist: true` when a suite runs the built package in another process (`npm run build` first; the
// sandbox then keeps dist/, built from the unmutated sources, so nothing mutated is judged by those alone).
// MUTATE_TESTS (comma-separated test files) narrows any profile to one file's suites (vitest.config.ts here).

const notSources = ['!**/*.test.ts', '!**/*.d.ts'];

/** @type {Record<string, { about: string, mutate: string[], tests: string[], vitest?: Record<string, unknown>, dist?: boolean }>} */
export const profiles = {
  receive: {
    about: 'the receiver core and the adapters (the first passes); test/receive, test/adapters, test/events',
    mutate: [
      'src/receive/**/*.ts',
      'src/dispatch/**/*.ts',
      'src/compile/**/*.ts',
      'src/delivery/consume.ts',
      'src/delivery/health.ts',
      'src/delivery/inbox-users.ts',
      'src/delivery/retry-policy.ts',
      'src/events/**/*.ts',
      'adapters/**/*.ts',
      ...notSources,
      // Generated sources are checked by regenerating them (test/generated.test.ts), not by mutation.
      '!**/generated/**',
    ],
    tests: ['test/receive/**/*.test.ts', 'test/adapters/**/*.test.ts', 'test/events/**/*.test.ts'],
  },
  'receive-core': {
    // Every request reaches these files: with `receive`, each of their mutants ran nearly every receive and
    // adapter suite (~15 s a mutant on the shared machine).
    about: 'admission, intake and the dispatcher; test/receive and test/telemetry without the validator, dedupe and worker suites',
    mutate: ['src/receive/intake/admission.ts', 'src/receive/intake/intake.ts', 'src/dispatch/dispatcher.ts'],
    tests: ['test/receive/**/*.test.ts', 'test/telemetry/**/*.test.ts'],
    vitest: {
      exclude: [
        'test/receive/compile.test.ts',
        'test/receive/explain.test.ts',
        'test/receive/envelope.test.ts',
        'test/receive/dedupe.test.ts',
        'test/receive/dedupe-collisions.test.ts',
        'test/receive/consume.test.ts',
        'test/receive/logger.test.ts',
        'test/receive/basic-credentials.test.ts',
        'test/receive/auth-timing.test.ts',
        'test/receive/auth-key.test.ts',
      ],
    },
  },
  auth: {
    // With `receive` nearly every receive and adapter suite authenticates its requests (~15 s an auth mutant).
    about: 'Basic auth; the credential check, its timing shape, app-bound credentials, the header parser',
    mutate: ['src/receive/auth/auth.ts', 'src/receive/auth/basic-credentials.ts'],
    tests: [
      'test/receive/auth.test.ts',
      'test/receive/auth-timing.test.ts',
      'test/receive/auth-key.test.ts',
      'test/receive/app-auth.test.ts',
      'test/receive/basic-credentials.test.ts',
      'test/receive/edges.test.ts',
      'test/adapters/node-headers.test.ts',
    ],
  },
  compile: {
    about: 'the compiled validator; its agreement with zod, property-based and edge by edge, and explain',
    mutate: ['src/compile/*.ts'],
    tests: ['test/receive/compile.test.ts', 'test/receive/explain.test.ts', 'test/receive/envelope.test.ts', 'test/receive/parse.test.ts'],
  },
  lambda: {
    about: 'the Lambda adapter; real API Gateway v1/v2, function URL and ALB events',
    mutate: ['adapters/lambda/*.ts'],
    tests: ['test/adapters/lambda*.test.ts'],
  },
  aws: {
    about: 'the AWS adapter (issue 33, item 9); sqsQueue against the local SQS endpoint, sqsHandler and the idempotency stores against dynalite',
    mutate: ['adapters/aws/*.ts'],
    tests: ['test/adapters/aws/*.test.ts'],
  },
  'telemetry-hono-keys': {
    about: 'the OpenTelemetry hooks, the Hono adapter and the idempotency keys (issue 33, item 9, part two)',
    mutate: ['src/telemetry/otel/*.ts', 'adapters/hono/*.ts', 'src/events/idempotency.ts', 'src/receive/idempotency.ts'],
    // test/telemetry/cardinality.test.ts (1 000 requests through every adapter) takes over a minute a mutant:
    // MUTATE_TESTS names the suites of the file at hand.
    tests: ['test/telemetry/*.test.ts', 'test/adapters/hono*.test.ts', 'test/events/*.test.ts', 'test/receive/app-keys.test.ts'],
    // test/telemetry/inboxes.test.ts runs a worker from the built package in another process.
    dist: true,
  },
  api: {
    // A file whose zod schemas are built at load (form.ts, message.ts, …): run it without --ignoreStatic on its
    // own suites (MUTATE_TESTS): each static mutant reloads the modules and runs every test, some 20 s a mutant
    // over all of test/api, about a second over one suite.
    about: 'the REST clients (src/api); test/api',
    mutate: ['src/api/**/*.ts', ...notSources],
    tests: ['test/api/**/*.test.ts'],
  },
  cli: {
    // The other test/cli suites run the built CLI as a child process, which mutants never reach: a file only they
    // exercise shows as "no coverage" until an in-process test reaches it.
    about: "the CLI's own logic; the CLI suites that run src/cli in this process",
    mutate: ['src/cli/**/*.ts', ...notSources],
    tests: ['test/cli/listen.test.ts', 'test/cli/listen-units.test.ts', 'test/cli/units.test.ts', 'test/cli/captured.test.ts', 'test/cli/send.test.ts'],
  },
  platform: {
    about: "the runtime seam's own logic (backoff, digests, peers); test/platform but the bundling suite",
    mutate: ['src/platform/*.ts'],
    tests: ['test/platform/backoff.test.ts', 'test/platform/peer.test.ts', 'test/platform/platform.test.ts'],
    // No PostgreSQL suite here: no cluster to start.
    vitest: { globalSetup: [] },
  },
  inbox: {
    about: 'every inbox and the delivery beside them; test/inbox (but outage.test.ts) and the consumer',
    mutate: ['src/stores/**/*.ts', 'src/delivery/port.ts', 'src/delivery/stored-event.ts', 'src/delivery/worker.ts', ...notSources],
    tests: ['test/inbox/**/*.test.ts', 'test/receive/consume.test.ts'],
    // It measures memory in child processes, which mutants do not reach.
    vitest: { exclude: ['test/inbox/outage.test.ts'] },
  },
  'inbox-local': {
    about: 'the in-process inboxes (memory, SQLite, the kit) and the delivery beside them, without Redis or PostgreSQL',
    mutate: ['src/stores/kit/*.ts', 'src/stores/memory.ts', 'src/stores/sqlite/*.ts', 'src/delivery/port.ts', 'src/delivery/stored-event.ts', 'src/delivery/worker.ts'],
    tests: [
      'test/inbox/inboxes.test.ts',
      'test/inbox/delivery.test.ts',
      'test/inbox/stored-event.test.ts',
      'test/inbox/kit.test.ts',
      'test/inbox/write-batch.test.ts',
      'test/inbox/turn-batch.test.ts',
      'test/inbox/file-sync.test.ts',
      'test/inbox/memory.test.ts',
      'test/inbox/port.test.ts',
      'test/inbox/stored-body.test.ts',
      'test/inbox/sqlite*.test.ts',
      'test/receive/consume.test.ts',
    ],
    vitest: {
      // Left out by name: the contract's Redis runs, the CLI's (a child process running dist/, which a mutant
      // never reaches), the 100 000-dead-entries runs (minutes, no line of their own) and the checkpointer's
      // 128 MB continuous writes (15 s; its RESTART is also reached by the catch-up test's `maxCatchUps: 0`).
      testNamePattern: /^(?!.*(redis|CLI|dead entries|past 32 MB)).*$/i,
      // No PostgreSQL suite here: no cluster to start.
      globalSetup: [],
    },
  },
  'inbox-servers': {
    about: 'the Redis and PostgreSQL inboxes, against a real redis-server and the run\'s throw-away PostgreSQL cluster',
    mutate: ['src/stores/redis/*.ts', 'src/stores/postgres/*.ts'],
    tests: [
      'test/inbox/postgres*.test.ts',
      'test/inbox/redis*.test.ts',
      'test/inbox/inboxes.test.ts',
      'test/inbox/delivery.test.ts',
      'test/inbox/stored-event.test.ts',
    ],
    // The admin test's dead entries: 2 500 cross the batches of 1 000 (100 000 take minutes a mutant).
    vitest: { env: { INBOX_DEAD_ENTRIES: '2500' } },
    // The contract's CLI tests run the built CLI against the store.
    dist: true,
  },
};

/** The profile named by MUTATE_PROFILE (set by tools/mutation/run.mjs), or an error that lists them. */
export function chosenProfile(name = process.env.MUTATE_PROFILE) {
  const profile = name === undefined ? undefined : profiles[name];
  if (profile === undefined) {
    throw new Error(`${name === undefined ? 'No mutation profile chosen' : `No mutation profile "${name}"`}: run \`npm run mutate -- <profile>\`, one of ${Object.keys(profiles).join(', ')}.`);
  }
  return profile;
}
