/**
 * src/cli/output.ts in-process: `escapeLines` (what `inbox show` and the CLI's error messages print of text a
 * sender chose), the palette a stream gets (colors on a TTY unless NO_COLOR), and where `Output` writes each
 * kind of text. escape-output.test.ts runs the built CLI as a child process, which a mutation run never
 * reaches; this file does.
 */
import { PassThrough, type Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { colorsFor, escapeLines, isTerminal, Output } from '../../src/cli/output.js';

/** A stream that keeps what is written to it, a terminal or not. */
function stream(tty: boolean): Writable & { text: () => string } {
  const chunks: string[] = [];
  const pass = new PassThrough();
  pass.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
  return Object.assign(pass, { isTTY: tty, text: () => chunks.join('') });
}

const flushed = () => new Promise((resolve) => setImmediate(resolve));

describe('escapeLines', () => {
  it('keeps each line feed and escapes every other control, CR, ESC, C1 and U+2028 included', () => {
    const text = '{\n  "a": "x\u001b[2J"\r\n}\n\u009b31m\u2028end\n';
    expect(escapeLines(text)).toBe('{\n  "a": "x\\u001b[2J"\\u000d\n}\n\\u009b31m\\u2028end\n');
  });

  it('leaves text without controls as it is, one line or many, empty lines kept', () => {
    for (const text of ['', 'one line', 'a\nb', '\n\n', 'héllo ✓ 😀\n']) expect(escapeLines(text)).toBe(text);
  });
});

describe('colorsFor and isTerminal', () => {
  it('a TTY gets ANSI colors, each closed by its own code', () => {
    const colors = colorsFor(stream(true), {});
    expect(colors.red('x')).toBe('\u001b[31mx\u001b[39m');
    expect(colors.green('x')).toBe('\u001b[32mx\u001b[39m');
    expect(colors.yellow('x')).toBe('\u001b[33mx\u001b[39m');
    expect(colors.cyan('x')).toBe('\u001b[36mx\u001b[39m');
    expect(colors.dim('x')).toBe('\u001b[2mx\u001b[22m');
    expect(colors.bold('x')).toBe('\u001b[1mx\u001b[22m');
  });

  it('NO_COLOR set to anything but empty, or a stream that is not a TTY, gets the text as it is', () => {
    const plainOf = (colors: ReturnType<typeof colorsFor>) => Object.values(colors).map((paint) => paint('x'));
    expect(plainOf(colorsFor(stream(true), { NO_COLOR: '1' }))).toEqual(['x', 'x', 'x', 'x', 'x', 'x']);
    expect(plainOf(colorsFor(stream(false), {}))).toEqual(['x', 'x', 'x', 'x', 'x', 'x']);
    expect(colorsFor(stream(true), { NO_COLOR: '' }).red('x')).toBe('\u001b[31mx\u001b[39m');
  });

  it('only isTTY true is a terminal', () => {
    expect(isTerminal(stream(true))).toBe(true);
    expect(isTerminal(stream(false))).toBe(false);
    expect(isTerminal(new PassThrough())).toBe(false);
    expect(isTerminal(Object.assign(new PassThrough(), { isTTY: 1 }))).toBe(false);
  });
});

describe('Output', () => {
  it('lines for a person on stdout, notes on stderr, no records without --json', async () => {
    const [out, err] = [stream(false), stream(false)];
    const output = new Output({}, out, err);
    expect(output.json).toBe(false);
    output.line('first');
    output.line();
    output.record({ a: 1 });
    output.note('a note');
    await flushed();
    expect(out.text()).toBe('first\n\n');
    expect(err.text()).toBe('a note\n');
  });

  it('with --json: one escaped NDJSON record a line, no lines for a person; notes still on stderr', async () => {
    const [out, err] = [stream(false), stream(false)];
    const output = new Output({ json: true }, out, err);
    expect(output.json).toBe(true);
    output.line('for a person');
    output.record({ text: 'x\u009b31m\u2028' });
    output.note('a note');
    await flushed();
    expect(out.text()).toBe('{"text":"x\\u009b31m\\u2028"}\n');
    expect(JSON.parse(out.text())).toEqual({ text: 'x\u009b31m\u2028' });
    expect(err.text()).toBe('a note\n');
  });

  afterEach(() => vi.unstubAllEnvs());

  it('colors each stream by itself: a TTY stdout and a piped stderr', () => {
    // Output reads process.env: a NO_COLOR of the machine running the tests would make every stream plain.
    vi.stubEnv('NO_COLOR', '');
    const output = new Output({ json: false }, stream(true), stream(false));
    expect(output.color.red('x')).toBe('\u001b[31mx\u001b[39m');
    expect(output.errColor.red('x')).toBe('x');
    const other = new Output({}, stream(false), stream(true));
    expect(other.color.red('x')).toBe('x');
    expect(other.errColor.red('x')).toBe('\u001b[31mx\u001b[39m');
  });
});
