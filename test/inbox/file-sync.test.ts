/**
 * The WAL's flusher (src/stores/sqlite/file-sync.ts) on its own: one fsync at a time, callers during one share the
 * next, a failure fails every later call, close() waits for the flushes asked for. node:fs's `fsync` is held
 * back by a gate, so that a test sees what waits for it; the file is a real one.
 */
import { mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { FileSync } from '../../src/stores/sqlite/file-sync.js';

type Callback = (error: NodeJS.ErrnoException | null) => void;
const gate = vi.hoisted(() => ({ fds: [] as number[], waiting: [] as Callback[] }));

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const fsync = (fd: number, callback: Callback) => {
    gate.fds.push(fd);
    gate.waiting.push((error) => (error ? callback(error) : real.fsync(fd, callback)));
  };
  return { ...real, fsync, default: { ...real, fsync } };
});

const dir = mkdtempSync(join(tmpdir(), 'file-sync-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  gate.fds.length = 0;
  for (const callback of gate.waiting.splice(0)) callback(null);
});
let serial = 0;
function file(): string {
  const path = join(dir, `f-${++serial}`);
  writeFileSync(path, 'x');
  return path;
}
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setTimeout(resolve, 1));
};
/** Whether `fd` is still this process's descriptor of `path` (a closed number may be reused for another file). */
function holds(fd: number, path: string): boolean {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`) === path;
  } catch {
    return false;
  }
}
const eio = () => Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
/** Lets the next held fsync go (or fail), then waits for its callback. */
async function finish(error: NodeJS.ErrnoException | null = null): Promise<void> {
  gate.waiting.shift()!(error);
  await turns(3);
}

describe('FileSync', () => {
  it('resolves a sync once its fsync of the file is done', async () => {
    const sync = new FileSync(file());
    let done = false;
    const first = sync.sync().then(() => (done = true));
    await turns(2);
    expect(gate.waiting).toHaveLength(1);
    expect(done).toBe(false);
    await finish();
    await first;
    expect(done).toBe(true);
    await sync.close();
  });

  it('calls during a running fsync share the next one, which starts once the running one ends', async () => {
    const sync = new FileSync(file());
    const first = sync.sync();
    const second = sync.sync();
    const third = sync.sync();
    expect(third).toBe(second);
    await turns(2);
    expect(gate.waiting).toHaveLength(1);
    await finish();
    await first;
    expect(gate.waiting).toHaveLength(1);
    const fourth = sync.sync(); // the second fsync is running: a third will follow it
    expect(fourth).not.toBe(second);
    await finish();
    await second;
    expect(gate.waiting).toHaveLength(1);
    await finish();
    await fourth;
    expect(gate.fds).toHaveLength(3);
    await sync.close();
  });

  it('a failed fsync fails its callers, those waiting for the next, and every later call, without another fsync', async () => {
    const sync = new FileSync(file());
    const first = sync.sync();
    const waiting = sync.sync();
    const firstError = first.catch((error: unknown) => error);
    const waitingError = waiting.catch((error: unknown) => error);
    await turns(1);
    await finish(eio());
    const error = (await firstError) as Error;
    expect(error.message).toBe('fsync failed: the inbox cannot promise durability until reopened (EIO: i/o error, fsync).');
    expect((error.cause as NodeJS.ErrnoException).code).toBe('EIO');
    expect(await waitingError).toBe(error);
    await expect(sync.sync()).rejects.toBe(error);
    expect(gate.fds).toHaveLength(1);
    await sync.close();
  });

  it('close() waits for the flushes asked for so far, then closes the file', async () => {
    const path = file();
    const sync = new FileSync(path);
    const [fd] = await (async () => {
      void sync.sync();
      void sync.sync();
      await turns(1);
      return gate.fds;
    })();
    let closed = false;
    const closing = sync.close().then(() => (closed = true));
    await turns(2);
    expect(closed).toBe(false);
    expect(holds(fd!, path)).toBe(true);
    await finish();
    expect(closed).toBe(false); // the following flush is running now
    expect(gate.waiting).toHaveLength(1);
    await finish();
    await closing;
    expect(closed).toBe(true);
    expect(holds(fd!, path)).toBe(false);
  });

  it('close() after a failed fsync still closes the file', async () => {
    const path = file();
    const sync = new FileSync(path);
    const failed = sync.sync().catch(() => undefined);
    await turns(1);
    const fd = gate.fds[0]!;
    await finish(eio());
    await failed;
    await sync.close();
    expect(holds(fd, path)).toBe(false);
  });
});
