/**
 * The logger the receiver writes to (src/dispatch/logger.ts): which levels pass, when DEBUG asks for debug
 * output, and the console logger's one-line records.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { consoleLogger, debugRequested, leveled, type WebhookLogger } from '../../src/dispatch/logger.js';

const saved = process.env.DEBUG;
afterEach(() => {
  if (saved === undefined) delete process.env.DEBUG;
  else process.env.DEBUG = saved;
  vi.restoreAllMocks();
});

/** Runs `read` with globalThis.process replaced (a worker has none; Deno may refuse to read the environment). */
function withProcess<T>(value: unknown, read: () => T): T {
  const real = Object.getOwnPropertyDescriptor(globalThis, 'process') as PropertyDescriptor;
  Object.defineProperty(globalThis, 'process', { value, configurable: true, writable: true });
  try {
    return read();
  } finally {
    Object.defineProperty(globalThis, 'process', real);
  }
}

describe('debugRequested', () => {
  it('reads DEBUG as the debug package does: this library by name, with a wildcard, or everything', () => {
    for (const value of ['chat-webhooks', 'chat-webhooks*', 'chat-webhooks:*', '*', 'express:*,chat-webhooks', 'express:* chat-webhooks', 'a,  *']) {
      process.env.DEBUG = value;
      expect(debugRequested(), value).toBe(true);
    }
    for (const value of ['', 'express:*', 'chat-webhooks-other', 'chat', 'chat-webhooks:x', 'x*']) {
      process.env.DEBUG = value;
      expect(debugRequested(), value).toBe(false);
    }
    delete process.env.DEBUG;
    expect(debugRequested()).toBe(false);
  });

  it('without a process, or one that refuses to show its environment, is no', () => {
    expect(withProcess(undefined, debugRequested)).toBe(false);
    expect(withProcess({}, debugRequested)).toBe(false);
    const refusing = {
      get env(): never {
        throw new Error('Requires env access');
      },
    };
    expect(withProcess(refusing, debugRequested)).toBe(false);
    expect(withProcess({ env: { DEBUG: 'chat-webhooks' } }, debugRequested)).toBe(true);
  });
});

describe('leveled', () => {
  const METHODS = ['debug', 'info', 'warn', 'error'] as const;
  /** A logger as a class instance: its methods need their `this`. */
  class Recorder implements WebhookLogger {
    readonly lines: string[] = [];
    debug(_fields: Record<string, unknown>, message?: string) {
      this.lines.push(`debug ${message}`);
    }
    info(_fields: Record<string, unknown>, message?: string) {
      this.lines.push(`info ${message}`);
    }
    warn(_fields: Record<string, unknown>, message?: string) {
      this.lines.push(`warn ${message}`);
    }
    error(_fields: Record<string, unknown>, message?: string) {
      this.lines.push(`error ${message}`);
    }
  }
  const levels = (logger: WebhookLogger) => METHODS.filter((method) => typeof logger[method] === 'function');

  it('passes on the given level and those above it, to the logger itself', () => {
    delete process.env.DEBUG;
    const expected = { debug: METHODS, info: ['info', 'warn', 'error'], warn: ['warn', 'error'], error: ['error'], silent: [] };
    for (const [level, methods] of Object.entries(expected)) {
      const recorder = new Recorder();
      const logger = leveled(recorder, level as keyof typeof expected);
      expect(levels(logger), level).toEqual(methods);
      for (const method of METHODS) logger[method]?.({}, level);
      expect(recorder.lines).toEqual(methods.map((method) => `${method} ${level}`));
    }
  });

  it('a given logger without a level is used as it is; a missing method stays missing', () => {
    delete process.env.DEBUG;
    const recorder = new Recorder();
    expect(leveled(recorder, undefined)).toBe(recorder);
    const partial: WebhookLogger = { error: () => undefined };
    expect(levels(leveled(partial, 'debug'))).toEqual(['error']);
  });

  it('the console by default logs warnings and errors; DEBUG=chat-webhooks opens debug, for a given logger too', () => {
    delete process.env.DEBUG;
    expect(levels(leveled(undefined, undefined))).toEqual(['warn', 'error']);
    process.env.DEBUG = 'chat-webhooks';
    expect(levels(leveled(undefined, undefined))).toEqual(METHODS);
    const recorder = new Recorder();
    const logger = leveled(recorder, undefined);
    expect(levels(logger)).toEqual(METHODS);
    logger.debug?.({}, 'seen');
    expect(recorder.lines).toEqual(['debug seen']);
    // An explicit level wins over DEBUG.
    expect(levels(leveled(undefined, 'error'))).toEqual(['error']);
  });
});

describe('consoleLogger', () => {
  it('writes one line per record to the console method of its level: message, then the fields as JSON', () => {
    const calls: Array<[string, unknown]> = [];
    for (const method of ['debug', 'info', 'warn', 'error'] as const) {
      vi.spyOn(console, method).mockImplementation((line: unknown) => void calls.push([method, line]));
      consoleLogger[method]?.({ n: 1 }, `${method} message`);
    }
    expect(calls).toEqual([
      ['debug', '[chat-webhooks] debug message {"n":1}'],
      ['info', '[chat-webhooks] info message {"n":1}'],
      ['warn', '[chat-webhooks] warn message {"n":1}'],
      ['error', '[chat-webhooks] error message {"n":1}'],
    ]);
  });

  it('writes bigints as text, fields JSON cannot write as a note, no message as nothing, controls escaped', () => {
    const lines: unknown[] = [];
    vi.spyOn(console, 'warn').mockImplementation((line: unknown) => void lines.push(line));
    consoleLogger.warn?.({ big: 12n });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    consoleLogger.warn?.(circular, 'loop');
    consoleLogger.warn?.({ key: 'a\nb\u001b[31m\u2028' }, 'line\r\nbreak');
    expect(lines).toEqual([
      '[chat-webhooks]  {"big":"12"}',
      '[chat-webhooks] loop {"fields":"not serializable"}',
      '[chat-webhooks] line\\u000d\\u000abreak {"key":"a\\nb\\u001b[31m\\u2028"}',
    ]);
  });
});
