/**
 * Vitest global setup: one throw-away PostgreSQL cluster for the whole run (test/support/postgres-server.ts),
 * its URL provided as `postgresUrl`; each test file that needs it makes a database of its own in it. Where
 * PostgreSQL is not installed, nothing starts, and those files fail saying how to install it.
 */
import type { TestProject } from 'vitest/node';
import { startPostgres, type PostgresServer } from './postgres-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string | undefined;
  }
}

let server: PostgresServer | undefined;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  server = await startPostgres().catch((error: unknown) => {
    console.warn(`No shared PostgreSQL for the tests: ${(error as Error).message}`);
    return undefined;
  });
  project.provide('postgresUrl', server?.url);
  return async () => {
    await server?.stop();
  };
}
