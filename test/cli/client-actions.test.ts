/**
 * The live page's copied commands (src/cli/page/client-actions.ts) as text, and printf's arguments run in
 * bash: which form a body gets (`'%s'` and the body as written; `'%b'` and octal escapes only when it holds a
 * control character other than the line feed), the exact escape of each byte, where the range of controls
 * starts and ends, and which flags a delivery's headers and `listen`'s user add. copy-commands.test.ts and
 * test/hostile/paste.test.ts run whole commands through curl and a pasted terminal; this one is fast enough
 * for a mutation run and says which part of a command is wrong.
 */
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { curlCommand, printfArguments, sendCommand } from '../../src/cli/page/client-actions.js';
import type { Delivery, PageState } from '../../src/cli/page/client.js';

/** What bash's printf writes, given the arguments. */
function printed(args: string): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    execFile('bash', ['-c', `printf ${args}`], { encoding: 'buffer' }, (error, stdout) => (error ? reject(error) : resolve(stdout))),
  );
}

function onPage(user: string | undefined): void {
  Object.assign(globalThis, { location: { origin: 'http://127.0.0.1:4000' }, state: { config: { user } } as unknown as PageState });
}

function delivery(rawBody: string, headers: Record<string, string>): Delivery {
  return { seq: 3, receivedAt: '', method: 'POST', path: '/webhooks', status: 200, verdict: 'valid', fields: [], issues: [], duplicate: false, headers, rawBody };
}

const code = (n: number) => String.fromCharCode(n);
/** Every character a pasted command must not hold raw: C0 but the line feed, DEL, C1. */
const CONTROLS = [...Array.from({ length: 32 }, (_, i) => i).filter((i) => i !== 10), ...Array.from({ length: 33 }, (_, i) => 0x7f + i)].map(code);

describe('printfArguments', () => {
  it("a body without controls is '%s' and the body as written: backslashes, % and line feeds untouched", async () => {
    expect(printfArguments('{"a":"\\n"}')).toBe(`'%s' '{"a":"\\n"}'`);
    expect(printfArguments('100%\nnext \\c line\n')).toBe(`'%s' '100%\nnext \\c line\n'`);
    expect(printfArguments('plain')).toBe(`'%s' plain`);
    expect(printfArguments('')).toBe(`'%s' ''`);
    expect((await printed(printfArguments('100%\nnext \\c line\n'))).toString()).toBe('100%\nnext \\c line\n');
  });

  it('the characters either side of each range of controls are not controls', () => {
    // Space, ~, U+00A0 and U+00FF are text; the line feed is left for the command's own lines.
    for (const text of [' ', '~', '\u00a0', '\u00ff', '\n', '\u2028']) expect(printfArguments(text)).toBe(`'%s' '${text}'`);
  });

  it("each control is '%b' and its UTF-8 bytes as \\0ooo escapes, three octal digits each", () => {
    expect(printfArguments('\u0000')).toBe(`'%b' '\\0000'`);
    expect(printfArguments('a\u0001b')).toBe(`'%b' 'a\\0001b'`);
    expect(printfArguments('\u0009')).toBe(`'%b' '\\0011'`);
    expect(printfArguments('\u000b\u001b[201~')).toBe(`'%b' '\\0013\\0033[201~'`);
    expect(printfArguments('\u001f\u007f')).toBe(`'%b' '\\0037\\0177'`);
    // C1: two bytes in UTF-8 (C2 80, C2 9F).
    expect(printfArguments('\u0080\u009f')).toBe(`'%b' '\\0302\\0200\\0302\\0237'`);
    for (const control of CONTROLS) expect(printfArguments(control)).toMatch(/^'%b' '(\\0[0-7]{3})+'$/);
  });

  it("with '%b', backslashes are doubled (%b would read them) and line feeds stay raw", () => {
    expect(printfArguments('\\c\u0001\n\\0101')).toBe(`'%b' '\\\\c\\0001\n\\\\0101'`);
  });

  it('every control, alone and among text, is written back byte for byte by bash', async () => {
    for (const control of CONTROLS) {
      const body = `a\\${control}%s\n${control}`;
      expect((await printed(printfArguments(body))).equals(Buffer.from(body, 'utf8')), JSON.stringify(body)).toBe(true);
    }
  });
});

describe('curlCommand and sendCommand', () => {
  const type = { 'content-type': 'application/json' };

  it('pipe the body to curl with its method, URL and content type; no credentials unless listen requires them', () => {
    onPage(undefined);
    expect(curlCommand(delivery('{}', { ...type, authorization: 'Basic ••' }))).toBe(
      `printf '%s' '{}' | curl --globoff -X POST http://127.0.0.1:4000/webhooks -H 'Content-Type: application/json' --data-binary @-`,
    );
    expect(curlCommand(delivery('{}', {}))).toBe(`printf '%s' '{}' | curl --globoff -X POST http://127.0.0.1:4000/webhooks --data-binary @-`);
  });

  it("take the user listen requires only for a delivery that came with credentials, the password from the environment", () => {
    onPage("o'neil");
    expect(curlCommand(delivery('{}', { ...type, authorization: 'Basic ••' }))).toBe(
      `printf '%s' '{}' | curl --globoff -X POST http://127.0.0.1:4000/webhooks -H 'Content-Type: application/json' -u 'o'\\''neil':"$CHAT_WEBHOOKS_PASSWORD" --data-binary @-`,
    );
    expect(curlCommand(delivery('{}', type))).not.toContain('-u');
  });

  it('write a body with controls as %b escapes; send --file writes it to its file, then sends that file', () => {
    onPage('app');
    expect(curlCommand(delivery('x\u001b', {}))).toBe(`printf '%b' 'x\\0033' | curl --globoff -X POST http://127.0.0.1:4000/webhooks --data-binary @-`);
    expect(sendCommand(delivery('x\u001b', {}))).toBe(
      `printf '%b' 'x\\0033' > delivery-3.json\n` +
        `npx chat-webhooks send --file delivery-3.json --url http://127.0.0.1:4000/webhooks --user app --password "$CHAT_WEBHOOKS_PASSWORD"`,
    );
  });
});
