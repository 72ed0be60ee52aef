/**
 * Child processes pinned to a CPU core with `taskset -c <core>` (when taskset exists and the machine has the
 * core), talking to the parent over node's IPC channel.
 */
import { spawn, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

const benchDir = new URL('../', import.meta.url);

let tasksetChecked;
/** Whether pinning works here: taskset present, and at least two cores (server and load generator apart). */
export function canPin() {
  if (tasksetChecked === undefined) {
    const probe = spawnSync('taskset', ['-c', '1', 'true'], { stdio: 'ignore' });
    tasksetChecked = probe.status === 0 && availableParallelism() >= 2;
  }
  return tasksetChecked;
}

/**
 * Starts `node [nodeArgs] bench/<script> [args]` on `core` and resolves once it said `{ type: 'ready' }`.
 * `call(message)` sends a message with a fresh id and resolves with the reply carrying that id.
 */
export function startChild(script, args = [], { core, nodeArgs = [], env = {}, cwd } = {}) {
  const command = [process.execPath, ...nodeArgs, new URL(script, benchDir).pathname, ...args];
  const pinned = core !== undefined && canPin();
  const child = spawn(pinned ? 'taskset' : command[0], pinned ? ['-c', String(core), ...command] : command.slice(1), {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...env },
    cwd,
  });
  const waiting = new Map();
  let nextId = 1;
  let readyResolve;
  let readyReject;
  const ready = new Promise((resolve, reject) => {
    readyResolve = resolve;
    readyReject = reject;
  });
  child.on('message', (message) => {
    if (message?.type === 'ready') readyResolve(message);
    else if (message?.id !== undefined && waiting.has(message.id)) {
      const { resolve } = waiting.get(message.id);
      waiting.delete(message.id);
      resolve(message);
    }
  });
  // A send to a child that just died reports through the callback above; never crash the parent for it.
  child.on('error', () => {});
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      const error = new Error(`${script} ${args.join(' ')} exited (${signal ?? code})`);
      readyReject(error);
      for (const { reject } of waiting.values()) reject(error);
      waiting.clear();
      resolve({ code, signal });
    });
  });
  const handle = {
    child,
    pinned,
    ready,
    exited,
    call(message) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        if (!child.connected) {
          reject(new Error(`${script} ${args.join(' ')} is gone`));
          return;
        }
        waiting.set(id, { resolve, reject });
        child.send({ ...message, id }, (error) => {
          if (!error) return;
          waiting.delete(id);
          reject(error);
        });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.send({ type: 'exit' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
  return handle;
}

/**
 * A child that is started again on the next call if it died in between (something else on the machine may
 * end it). `call` still rejects when the child dies during that call: the caller decides to retry.
 */
export function supervisedChild(script, args = [], options = {}) {
  let handle;
  const dead = () => !handle || handle.child.exitCode !== null || handle.child.signalCode !== null;
  const supervised = {
    restarts: 0,
    async ensure() {
      if (dead()) {
        if (handle) supervised.restarts++;
        handle = startChild(script, args, options);
        await handle.ready;
      }
      return handle;
    },
    get child() {
      return handle?.child;
    },
    async call(message) {
      return (await supervised.ensure()).call(message);
    },
    async stop() {
      if (handle) await handle.stop();
    },
  };
  return supervised;
}

/** Whether a started child has exited. */
export function exited(handle) {
  return handle.child.exitCode !== null || handle.child.signalCode !== null;
}
