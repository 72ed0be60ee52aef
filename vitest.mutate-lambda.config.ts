// The Lambda adapter's suites, for `stryker.lambda.config.mjs`: real API Gateway v1/v2, function URL and ALB
// events through the translation and the handler. The other adapter and receive suites never reach
// adapters/lambda.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: { ...base.test, include: ['test/adapters/lambda*.test.ts'] },
});
