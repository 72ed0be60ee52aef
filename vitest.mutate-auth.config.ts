// The suites that judge Basic auth (src/receive/auth.ts), for `stryker.auth.config.mjs`: the credential check
// alone, its timing shape, app-bound credentials, the header parser, a repeated Authorization through the
// core and through node-based adapters. With the full mutate config nearly every receive and adapter suite
// authenticates its requests, so each auth mutant ran all of them (~15 s each on the shared machine).
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'test/receive/auth.test.ts',
      'test/receive/auth-timing.test.ts',
      'test/receive/auth-key.test.ts',
      'test/receive/app-auth.test.ts',
      'test/receive/basic-credentials.test.ts',
      'test/receive/edges.test.ts',
      'test/adapters/node-headers.test.ts',
    ],
  },
});
