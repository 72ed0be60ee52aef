/**
 * The fenced code blocks of a Markdown text, with how each is meant to be checked. A `js`, `mjs` or `ts`
 * block runs as it is unless it is marked, on the line right before its fence or in its info string:
 *   <!-- fragment -->               (or <!-- fragment: why -->, or ```js fragment) not run: a piece of a larger program
 *   <!-- typecheck -->              a ts block that is type-checked under strict but not run (it starts what
 *                                   would not stop, or listens on a fixed port)
 *   <!-- server -->                 a server: started, sent a real delivery (which must get a 200), stopped
 *   <!-- server: prints the text --> the same, and its output must show the delivered message's text
 */
export type BlockKind = 'run' | 'fragment' | 'typecheck' | 'server';

export interface CodeBlock {
  /** The Markdown file, relative to the repository: README.md or docs/<guide>.md. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: 'js' | 'ts';
  kind: BlockKind;
  /** For a server: its output must include the text of the message it was sent. */
  printsText: boolean;
  code: string;
}

const CHECKED = new Map<string, CodeBlock['lang']>([
  ['js', 'js'],
  ['mjs', 'js'],
  ['javascript', 'js'],
  ['ts', 'ts'],
  ['mts', 'ts'],
  ['typescript', 'ts'],
]);

export const MARKING_HELP =
  'A block of the README or of a guide that is not meant to run as it is must say so on the line right before its fence: ' +
  '<!-- fragment --> (not run), <!-- typecheck --> (ts: type-checked, not run), <!-- server --> (started and sent a delivery), or ' +
  '<!-- server: prints the text --> (and must print the message text); see test/support/readme-blocks.ts.';

function kindOf(marker: string, info: string): Pick<CodeBlock, 'kind' | 'printsText'> {
  const comment = /^<!--\s*(fragment|typecheck|server)\b(.*?)-->\s*$/.exec(marker.trim());
  const word = comment?.[1] ?? /\b(fragment|typecheck|server)\b/.exec(info)?.[1];
  if (word === 'fragment' || word === 'typecheck') return { kind: word, printsText: false };
  if (word === 'server') return { kind: 'server', printsText: /prints the text/.test(comment?.[2] ?? info) };
  return { kind: 'run', printsText: false };
}

/** Every js/ts block of the text, in order; `file` names it in messages. */
export function codeBlocks(markdown: string, file = 'README.md'): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w+)?(.*)$/.exec(lines[i] ?? '');
    if (!open) continue;
    const end = lines.findIndex((text, j) => j > i && /^```\s*$/.test(text));
    if (end < 0) throw new Error(`${file} line ${i + 1}: a code block that is never closed`);
    const lang = CHECKED.get(open[1] ?? '');
    if (lang) {
      const { kind, printsText } = kindOf(lines[i - 1] ?? '', open[2] ?? '');
      blocks.push({ file, line: i + 1, lang, kind, printsText, code: `${lines.slice(i + 1, end).join('\n')}\n` });
    }
    i = end;
  }
  return blocks;
}
