/**
 * The count harness's warm-up (bench/lib/callgrind.mjs, issue 40): the requests it counts must find V8's code
 * settled. Closing connections deoptimizes node's socket and stream functions; when the warm-up's connections
 * were closed and the count ran over new ones, some 35 functions were recompiled inside the count, at a cost
 * that followed the compiler threads' timing (ours-fastify counted 279–340 k instructions a request in five
 * runs). Checked here without valgrind, by V8's own trace of what it deoptimizes and compiles.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: the bench's helpers are plain JavaScript modules without types.
import { close, send, warmUp } from '../../bench/lib/callgrind.mjs';

const servers = fileURLToPath(new URL('../../bench/servers.mjs', import.meta.url));
let stop: (() => void) | undefined;
afterEach(() => stop?.());

/** bare node:http (no build needed), with V8's trace of optimizations and deoptimizations on its stdout. */
async function tracedServer(): Promise<{ port: number; output: () => string }> {
  const child = spawn(process.execPath, ['--trace-opt', '--trace-deopt', servers, 'bare-node', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  stop = () => child.kill('SIGKILL');
  let out = '';
  child.stdout.setEncoding('latin1');
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      const port = /127\.0\.0\.1:(\d+)/.exec(out)?.[1];
      if (port) resolve(Number(port));
    });
    child.once('exit', (code) => reject(new Error(`bare-node exited (${code})`)));
  });
  return { port, output: () => out };
}

describe('the count harness warm-up', () => {
  it('leaves nothing to deoptimize or recompile in the requests it counts over 50 connections', async () => {
    const { port, output } = await tracedServer();
    const sockets = await warmUp(port, 3000, 'chat', 50);
    const from = output().length;
    await send(sockets, port, 1000, 'chat');
    // Lines V8 prints for work it finishes on its threads come in the next turns.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const counted = output().slice(from);
    await close(sockets);
    const compiled = counted.match(/completed compiling/g) ?? [];
    expect(counted.match(/bailout/g) ?? []).toEqual([]);
    // A handful of functions still reach their threshold late (the counting handler, say); the reconnect's
    // cascade was 30 or more.
    expect(compiled.length).toBeLessThan(10);
  });
});
