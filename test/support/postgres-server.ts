/**
 * Starts a throw-away PostgreSQL cluster: `initdb` in a temporary folder, `pg_ctl start` on a free port (TCP on
 * 127.0.0.1 only, trust authentication), removed again by `stop()`. The binaries are Debian's
 * (/usr/lib/postgresql/<version>/bin, not on PATH; the newest version installed is taken). PostgreSQL refuses
 * to run as root: as root, the folder is given to the `postgres` user and every command runs through
 * `runuser -u postgres --`. Nothing depends on the cluster Debian's package may have created and started.
 *
 * The test run shares one cluster (test/support/postgres-global.ts starts it, each file makes its own
 * database: `postgresDatabase()`); a test that restarts the server starts its own.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { beforeAll, afterAll, inject } from 'vitest';
import { freePort } from './redis-server.js';

const run = promisify(execFile);
const PG_ROOT = '/usr/lib/postgresql';

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  dir: string;
  /** Database URL of another database of this cluster. */
  urlOf(database: string): string;
  /** pg_ctl stop -m fast, then start again on the same port. */
  restart(): Promise<void>;
  /** pg_ctl stop -m immediate (a crash: no checkpoint, recovery from the WAL on start), then start again. */
  crash(): Promise<void>;
  stopFast(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The newest installed version's bin folder. */
export function postgresBin(): string {
  const versions = existsSync(PG_ROOT) ? readdirSync(PG_ROOT).filter((name) => /^\d+$/.test(name)) : [];
  const newest = versions.map(Number).sort((a, b) => b - a)[0];
  if (newest !== undefined && existsSync(join(PG_ROOT, String(newest), 'bin', 'initdb'))) return join(PG_ROOT, String(newest), 'bin');
  throw new Error(`PostgreSQL is not installed (no ${PG_ROOT}/<version>/bin/initdb): apt-get install -y postgresql`);
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** Runs a PostgreSQL binary, as `postgres` when we are root. */
async function pgCommand(bin: string, name: string, args: string[]): Promise<string> {
  const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, name), ...args]] : [join(bin, name), args];
  try {
    const { stdout } = await run(command, argv, { timeout: 60_000 });
    return stdout;
  } catch (error) {
    const { stderr = '', stdout = '' } = error as { stderr?: string; stdout?: string };
    throw new Error(`${name} ${args.join(' ')} failed: ${(error as Error).message}\n${stdout}${stderr}`);
  }
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBin();
  const dir = mkdtempSync(join(tmpdir(), 'inbox-postgres-'));
  if (asRoot) chownSync(dir, ...(await postgresIds()));
  const data = join(dir, 'data');
  await pgCommand(bin, 'initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=on`;
  const start = async () => void (await pgCommand(bin, 'pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']));
  const stopFast = async () => void (await pgCommand(bin, 'pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']));
  await start();
  const urlOf = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    url: urlOf('postgres'),
    port,
    dir,
    urlOf,
    start,
    stopFast,
    async restart() {
      await stopFast();
      await start();
    },
    async crash() {
      await pgCommand(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '60', 'stop']);
      await start();
    },
    async stop() {
      await stopFast().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresIds(): Promise<[number, number]> {
  const { stdout } = await run('id', ['-u', 'postgres']);
  const { stdout: group } = await run('id', ['-g', 'postgres']);
  return [Number(stdout.trim()), Number(group.trim())];
}

let databases = 0;

/** A fresh database in the run's shared cluster (started by test/support/postgres-global.ts). */
export async function createDatabase(serverUrl: string): Promise<string> {
  const name = `t_${process.pid}_${Date.now().toString(36)}_${++databases}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return serverUrl.replace(/\/[^/]*$/, `/${name}`);
}

/**
 * A database of its own for this test file, in the run's shared cluster; `url` is usable inside tests.
 * Run alone outside the global setup (an editor's test runner), the file starts a cluster of its own.
 */
export function postgresDatabase(): { readonly url: string } {
  let url: string | undefined;
  let own: PostgresServer | undefined;
  beforeAll(async () => {
    let server = inject('postgresUrl') as string | undefined;
    if (!server) {
      own = await startPostgres();
      server = own.url;
    }
    url = await createDatabase(server);
  }, 60_000);
  afterAll(async () => {
    await own?.stop();
  });
  return {
    get url() {
      if (!url) throw new Error('The database is made in beforeAll: use it inside tests.');
      return url;
    },
  };
}
