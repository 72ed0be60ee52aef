/**
 * The live page's payload view, run in the browser: JSON as a tree (each object and array folds; a folded
 * one shows how many entries it holds), its keys, strings, numbers, booleans and nulls in
 * their own colours. Shipped as source text with client.ts (client-script.ts), under the same rules. The
 * tree's text is the JSON itself (the fold marks are CSS), so selecting and copying it gives JSON back. Not
 * <details>: Chromium lays out a details' content as a block even when folded, so `}` and its comma would
 * sit on lines of their own.
 */

export function jsonLeaf(value: unknown): HTMLSpanElement {
  const node = document.createElement('span');
  const kind = value === null ? 'null' : typeof value === 'string' ? 'str' : typeof value === 'number' ? 'num' : 'bool';
  node.className = `j-${kind}`;
  node.textContent = JSON.stringify(value);
  return node;
}

/**
 * An object or array, open down to four levels deep and folded past them: its opening bracket is the button
 * that folds it (Enter or a click), and a folded one says how many entries it holds (CSS, from data-count).
 */
export function jsonBranch(value: object, depth: number): HTMLElement {
  const entries = Array.isArray(value) ? value.map((item, index) => [String(index), item] as const) : Object.entries(value);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  const wrapper = document.createElement('span');
  wrapper.className = 'j-value';
  if (entries.length === 0) {
    wrapper.textContent = `${open}${close}`;
    return wrapper;
  }
  const toggle = document.createElement('button');
  toggle.type = 'button';
  toggle.className = 'j-toggle';
  toggle.textContent = open;
  const noun = Array.isArray(value) ? (entries.length === 1 ? 'item' : 'items') : entries.length === 1 ? 'key' : 'keys';
  toggle.dataset.count = `${entries.length} ${noun}`;
  const items = document.createElement('div');
  items.className = 'j-items';
  entries.forEach(([key, item], index) => {
    const row = document.createElement('div');
    row.className = 'j-row';
    if (!Array.isArray(value)) {
      const name = document.createElement('span');
      name.className = 'j-key';
      name.textContent = JSON.stringify(key);
      row.append(name, document.createTextNode(': '));
    }
    row.append(jsonNode(item, depth + 1));
    if (index < entries.length - 1) row.append(document.createTextNode(','));
    items.append(row);
  });
  wrapper.append(toggle, items, document.createTextNode(close));
  // Deep levels of a big event start folded: the envelope and its data read first.
  setFolded(wrapper, depth >= 4);
  return wrapper;
}

export function setFolded(wrapper: HTMLElement, folded: boolean): void {
  wrapper.classList.toggle('folded', folded);
  (wrapper.querySelector(':scope > .j-toggle') as HTMLElement).setAttribute('aria-expanded', String(!folded));
}

/** The detail pane's clicks on a bracket: fold or unfold what it opens. */
export function onFoldClick(event: Event): void {
  const toggle = (event.target as HTMLElement).closest('.j-toggle');
  if (!toggle?.parentElement) return;
  setFolded(toggle.parentElement, !toggle.parentElement.classList.contains('folded'));
}

export function jsonNode(value: unknown, depth: number): HTMLElement {
  return typeof value === 'object' && value !== null ? jsonBranch(value, depth) : jsonLeaf(value);
}

/** The payload: a JSON tree when the body parses, the body as it came otherwise (a refused one may be anything). */
export function payloadView(raw: string): HTMLElement {
  const view = document.createElement('div');
  view.id = 'payload';
  try {
    view.className = 'payload json';
    view.append(jsonNode(JSON.parse(raw), 0));
  } catch {
    view.className = 'payload raw';
    view.textContent = raw;
  }
  return view;
}
