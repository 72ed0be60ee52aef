// The AWS adapter's suites, for `stryker.aws.config.mjs`: the receiver's sqsQueue against the local SQS
// endpoint, the consumer's sqsHandler and the idempotency stores against dynalite, and the two end to end. No
// other suite reaches adapters/aws. MUTATE_TESTS (comma-separated test files) narrows it further, as in
// vitest.mutate-api.config.ts.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

const only = process.env.MUTATE_TESTS?.split(',').map((file) => file.trim()).filter(Boolean);

export default defineConfig({
  ...base,
  test: { ...base.test, include: only?.length ? only : ['test/adapters/aws/*.test.ts'] },
});
