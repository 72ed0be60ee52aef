/**
 * Runs the built CLI (`dist/src/cli/index.js`) as a child process, as a user's shell would, and keeps a
 * `listen` running for a test: its port from the banner, its NDJSON records as they come, SIGINT to stop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = fileURLToPath(new URL('../../dist/src/cli/index.js', import.meta.url));

export function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before the CLI tests.`);
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface RunOptions {
  input?: string;
  env?: Record<string, string | undefined>;
  cwd?: string;
}

/** The environment of a plain, colorless run: no inherited NO_COLOR/FORCE_COLOR to hide a bug. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  delete env.CHAT_WEBHOOKS_USER;
  delete env.CHAT_WEBHOOKS_PASSWORD;
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

export function runCli(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const started = Date.now();
  const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd ?? ROOT, env: cleanEnv(options.env) });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(options.input ?? '');
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

/** Runs a shell command line in a pseudo-terminal (util-linux `script`), so the CLI sees a TTY. */
export function runInTerminal(commandLine: string, env: Record<string, string | undefined> = {}): Promise<RunResult> {
  const started = Date.now();
  const child = spawn('script', ['-qec', commandLine, '/dev/null'], { cwd: ROOT, env: cleanEnv({ TERM: 'xterm', SHELL: '/bin/sh', ...env }) });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stdin.end();
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr: '', ms: Date.now() - started }));
  });
}

export interface ListenRecord {
  seq: number;
  status: number;
  verdict: 'valid' | 'unknown' | 'invalid' | 'refused';
  code?: string;
  trigger?: string;
  key?: string;
  duplicate: boolean;
  issues: { path: string; message: string }[];
  rawBody: string;
  headers?: Record<string, string>;
  fields: [string, string][];
  forward?: { url: string; status?: number; ms: number; error?: string };
}

export class Listener {
  readonly records: ListenRecord[] = [];
  /** All of stdout: readable lines without --json. */
  text = '';
  stderr = '';
  #buffer = '';
  #waiters: (() => void)[] = [];

  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
    private readonly json: boolean,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  /** Starts `listen --port 0 --json` plus `args`; resolves once it listens. */
  static start(args: string[] = []): Promise<Listener> {
    return Listener.#spawn(['--json', ...args], true);
  }

  /** Starts `listen --port 0` (readable output) plus `args`. */
  static startPlain(args: string[] = []): Promise<Listener> {
    return Listener.#spawn(args, false);
  }

  static #spawn(args: string[], json: boolean): Promise<Listener> {
    const child = spawn(process.execPath, [CLI, 'listen', '--port', '0', ...args], { cwd: ROOT, env: cleanEnv() });
    return new Promise((resolve, reject) => {
      let stderr = '';
      const timer = setTimeout(() => reject(new Error(`listen did not start: ${stderr}`)), 10_000);
      child.on('error', reject);
      child.on('exit', (code) => reject(new Error(`listen exited with ${code}: ${stderr}`)));
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
        const match = /Listening on http:\/\/127\.0\.0\.1:(\d+)\//.exec(stderr);
        if (!match) return;
        clearTimeout(timer);
        const listener = new Listener(child, Number(match[1]), json);
        listener.stderr = stderr;
        child.stderr?.on('data', (more: string) => (listener.stderr += more));
        child.stdout?.setEncoding('utf8').on('data', (more: string) => listener.#take(more));
        resolve(listener);
      });
    });
  }

  #take(chunk: string): void {
    this.text += chunk;
    if (!this.json) {
      for (const wake of this.#waiters.splice(0)) wake();
      return;
    }
    this.#buffer += chunk;
    let newline: number;
    while ((newline = this.#buffer.indexOf('\n')) !== -1) {
      this.records.push(JSON.parse(this.#buffer.slice(0, newline)) as ListenRecord);
      this.#buffer = this.#buffer.slice(newline + 1);
    }
    for (const wake of this.#waiters.splice(0)) wake();
  }

  /** Resolves once `count` records have arrived in all. */
  async waitFor(count: number, timeoutMs = 10_000): Promise<ListenRecord[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.records.length < count) {
      if (Date.now() > deadline) throw new Error(`listen recorded ${this.records.length} of ${count} deliveries`);
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
    return this.records.slice(0, count);
  }

  /** Resolves with all of stdout once it matches `pattern`. */
  async waitForText(pattern: RegExp, timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(this.text)) {
      if (Date.now() > deadline) throw new Error(`listen printed no match for ${pattern}:\n${this.text}`);
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
    return this.text;
  }

  /** Ctrl-C: resolves with the exit code. */
  stop(): Promise<number | null> {
    if (this.child.exitCode !== null) return Promise.resolve(this.child.exitCode);
    return new Promise((resolve) => {
      this.child.removeAllListeners('exit');
      this.child.on('exit', (code) => resolve(code));
      this.child.kill('SIGINT');
    });
  }
}
