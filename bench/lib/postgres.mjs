/**
 * A throw-away PostgreSQL cluster for the benchmarks (as test/support/postgres-server.ts does for the tests):
 * Debian's binaries from /usr/lib/postgresql/<newest>/bin, `initdb` in a temporary folder, `pg_ctl start` on a
 * free port, run as the `postgres` user when we are root (PostgreSQL refuses root). Server settings are the
 * defaults (fsync on, synchronous_commit on), so every commit waits for its WAL flush, as in production.
 * `core`: pin the server's processes to that CPU core (taskset), as the Redis server is pinned.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = '/usr/lib/postgresql';

function binDir() {
  const versions = existsSync(ROOT) ? readdirSync(ROOT).filter((name) => /^\d+$/.test(name)).map(Number).sort((a, b) => b - a) : [];
  if (versions.length === 0) throw new Error('PostgreSQL is not installed (apt-get install -y postgresql)');
  return join(ROOT, String(versions[0]), 'bin');
}

const asRoot = process.getuid?.() === 0;

function pgRun(bin, name, args, core) {
  const command = [join(bin, name), ...args];
  const pinned = core === undefined ? command : ['taskset', '-c', String(core), ...command];
  const [file, ...argv] = asRoot ? ['runuser', '-u', 'postgres', '--', ...pinned] : pinned;
  return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function pgRunAsync(bin, name, args, core) {
  const command = [join(bin, name), ...args];
  const pinned = core === undefined ? command : ['taskset', '-c', String(core), ...command];
  const [file, ...argv] = asRoot ? ['runuser', '-u', 'postgres', '--', ...pinned] : pinned;
  return new Promise((resolve, reject) => execFile(file, argv, (error) => (error ? reject(error) : resolve())));
}

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export async function startPostgres({ core } = {}) {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'bench-postgres-'));
  if (asRoot) {
    const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, id('-u'), id('-g'));
  }
  const data = join(dir, 'data');
  pgRun(bin, 'initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-instructions']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`;
  pgRun(bin, 'pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start'], core);
  const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dir,
    /** CPU time (µs) of the server's processes: the postmaster's children, live and reaped. */
    cpuUs() {
      try {
        const fields = readFileSync(`/proc/${postmaster}/stat`, 'utf8').split(') ')[1].split(' ');
        const ticks = fields.slice(11, 15).reduce((sum, value) => sum + Number(value), 0);
        const live = readdirSync('/proc').filter((pid) => /^\d+$/.test(pid)).reduce((sum, pid) => {
          try {
            const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
            return Number(stat[1]) === postmaster ? sum + Number(stat[11]) + Number(stat[12]) : sum;
          } catch {
            return sum;
          }
        }, 0);
        return ((ticks + live) * 1e6) / 100;
      } catch {
        return NaN;
      }
    },
    /** `pg_ctl -m immediate` stop (a crash: recovery from the WAL on start), then start again on the same port. */
    // Not execFileSync: the caller's senders and pollers keep running through the outage, as a real one's would.
    async crash() {
      await pgRunAsync(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      await pgRunAsync(bin, 'pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start'], core);
    },
    stop() {
      try {
        pgRun(bin, 'pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
