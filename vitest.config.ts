import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // The sources' runtime seam, as tsconfig.json's customConditions resolves it (package.json "imports").
    alias: { '#platform': fileURLToPath(new URL('src/platform/node.ts', import.meta.url)) },
  },
  test: {
    include: ['src/**/*.test.ts', 'adapters/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    // One throw-away PostgreSQL cluster for the run (the PostgreSQL inbox's tests make a database each in it).
    globalSetup: ['test/support/postgres-global.ts'],
    // `rejects.toThrow('…')` fails for a promise rejected with undefined (chai passed it).
    setupFiles: ['test/support/strict-throws.ts'],
  },
});
