/**
 * The live page's rendering, run in the browser: the list, the filters, the detail pane. Its functions are
 * typechecked here and shipped as their source text (see client-script.ts), so each may refer only to the
 * functions shipped with it, to `state` (made by `createState`) and to browser globals. The buttons of the
 * detail pane say what they do in `data-action`; client-actions.ts does it.
 */
import { payloadView } from './client-json.js';

interface Issue {
  path: string;
  message: string;
}

/** What `listen` publishes of a delivery (src/cli/captured.ts), as far as the page uses it. */
export interface Delivery {
  seq: number;
  receivedAt: string;
  method: string;
  path: string;
  status: number;
  verdict: 'valid' | 'unknown' | 'invalid' | 'refused';
  code?: string;
  answer?: string;
  trigger?: string;
  fields: [string, string][];
  issues: Issue[];
  key?: string;
  duplicate: boolean;
  headers: Record<string, string>;
  rawBody: string;
  forward?: { status?: number; ms: number; error?: string };
}

/** What `listen` renders into the page (the `#config` data block). */
export interface PageConfig {
  instance: string;
  /** The user name `listen` requires (never the password). */
  user?: string;
  forward?: string;
  /** The newest deliveries when the page was served, oldest first. */
  records: Delivery[];
}

export interface PageState {
  config: PageConfig;
  /** Every delivery the page holds, by seq. */
  deliveries: Map<number, Delivery>;
  paused: boolean;
  /** Arrived while paused, shown on resume. */
  queued: Delivery[];
  /** The highest seq received, for `events?after=`. */
  last: number;
  /** The timer that clears the notice line. */
  noticeTimer?: ReturnType<typeof setTimeout>;
}

declare const state: PageState;

export function createState(): PageState {
  const config = JSON.parse((document.getElementById('config') as HTMLElement).textContent ?? '{}') as PageConfig;
  return { config, deliveries: new Map(), paused: false, queued: [], last: 0 };
}

export function element<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function pretty(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

export function factsOf(delivery: Delivery): string {
  const facts = [`${delivery.method} ${delivery.path}`, `status ${delivery.status}`, `received ${delivery.receivedAt}`];
  if (delivery.key) {
    const repeat = delivery.verdict === 'invalid' ? 'not stored: invalid' : delivery.duplicate ? 'duplicate: handlers not run again' : 'first delivery';
    facts.push(`key ${delivery.key}`, repeat);
  }
  if (delivery.answer) facts.push(`answer: ${delivery.answer}`);
  if (delivery.forward) facts.push(`forwarded: ${delivery.forward.status ?? delivery.forward.error} (${Math.round(delivery.forward.ms)} ms)`);
  return facts.join(' · ');
}

export function actionButton(action: string, label: string): HTMLButtonElement {
  const button = element('button', 'action', label);
  button.type = 'button';
  button.dataset.action = action;
  button.id = `action-${action}`;
  return button;
}

export function headersTable(headers: Record<string, string>): HTMLTableElement {
  const table = element('table', 'headers');
  table.id = 'headers';
  for (const [name, value] of Object.entries(headers)) {
    const row = element('tr', '');
    row.append(element('th', '', name), element('td', '', value));
    table.append(row);
  }
  return table;
}

export function issuesList(issues: Issue[]): HTMLUListElement {
  const list = element('ul', 'issues');
  list.id = 'issues';
  for (const issue of issues) {
    const item = element('li', 'issue');
    item.append(element('code', 'issue-path', issue.path), document.createTextNode(` ${issue.message}`));
    list.append(item);
  }
  return list;
}

/** Fills the detail pane: title, facts, actions, validation issues (with paths), headers, the payload. */
export function showDelivery(delivery: Delivery, focus: boolean): void {
  const list = document.getElementById('deliveries') as HTMLOListElement;
  const detail = document.getElementById('detail') as HTMLElement;
  for (const selected of list.querySelectorAll('.selected')) selected.classList.remove('selected');
  list.querySelector(`[data-seq="${delivery.seq}"]`)?.classList.add('selected');
  detail.replaceChildren();
  detail.dataset.seq = String(delivery.seq);
  const title = element('h2', 'detail-title', `#${delivery.seq} ${delivery.trigger ?? '(no trigger)'} · ${delivery.verdict}${delivery.code ? ` (${delivery.code})` : ''}`);
  title.tabIndex = -1;
  const actions = element('div', 'actions');
  actions.append(actionButton('copy-payload', 'Copy payload'), actionButton('copy-curl', 'Copy as curl'), actionButton('copy-send', 'Copy as send --file'));
  if (state.config.forward) actions.append(actionButton('resend', `Resend to ${state.config.forward}`));
  detail.append(title, element('p', 'facts', factsOf(delivery)), actions);
  if (delivery.issues.length > 0) detail.append(element('h3', '', 'Validation issues'), issuesList(delivery.issues));
  detail.append(element('h3', '', 'Headers (credentials masked)'), headersTable(delivery.headers));
  detail.append(element('h3', '', 'Payload'), payloadView(delivery.rawBody));
  // From the keyboard, the next Tab goes to the copy buttons rather than through the rest of the list.
  if (focus) title.focus();
}

/** Whether a delivery passes the trigger and status filters and the search. */
export function matches(delivery: Delivery): boolean {
  const trigger = (document.getElementById('filter-trigger') as HTMLSelectElement).value;
  const status = (document.getElementById('filter-status') as HTMLSelectElement).value;
  const search = (document.getElementById('search') as HTMLInputElement).value.trim().toLowerCase();
  if (trigger !== '' && (delivery.trigger ?? '') !== trigger) return false;
  const byStatus: Record<string, boolean> = {
    '': true,
    '2xx': delivery.status >= 200 && delivery.status < 300,
    '4xx': delivery.status >= 400 && delivery.status < 500,
    '5xx': delivery.status >= 500,
    invalid: delivery.verdict === 'invalid',
    duplicate: delivery.duplicate,
  };
  if (!byStatus[status]) return false;
  if (search === '') return true;
  return [delivery.rawBody, delivery.key ?? '', delivery.trigger ?? ''].some((text) => text.toLowerCase().includes(search));
}

/** Shows the deliveries that pass the filters, hides the others, and says how many are shown. */
export function applyFilters(): void {
  const items = (document.getElementById('deliveries') as HTMLOListElement).children;
  let shown = 0;
  for (const item of Array.from(items) as HTMLElement[]) {
    const delivery = state.deliveries.get(Number(item.dataset.seq));
    item.hidden = delivery === undefined || !matches(delivery);
    if (!item.hidden) shown++;
  }
  const total = state.deliveries.size;
  (document.getElementById('count') as HTMLElement).textContent = total === 0 ? '' : `${shown} of ${total} shown`;
  (document.getElementById('empty') as HTMLElement).hidden = total > 0;
  followFilters();
}

/**
 * The detail pane shows what the list shows: a selected delivery the filters or the search now hide gives
 * way to the first one shown, or to a line saying none matches.
 */
export function followFilters(): void {
  const detail = document.getElementById('detail') as HTMLElement;
  const selected = detail.dataset.seq === undefined ? undefined : document.querySelector(`#deliveries [data-seq="${detail.dataset.seq}"]`);
  if (detail.dataset.seq === undefined || (selected && !(selected as HTMLElement).hidden)) return;
  const first = document.querySelector('#deliveries li:not([hidden])') as HTMLElement | null;
  const delivery = first ? state.deliveries.get(Number(first.dataset.seq)) : undefined;
  if (delivery) return showDelivery(delivery, false);
  detail.replaceChildren(element('p', 'no-match', 'No delivery matches the filters and the search.'));
  delete detail.dataset.seq;
}

export function addTriggerOption(trigger: string | undefined): void {
  const select = document.getElementById('filter-trigger') as HTMLSelectElement;
  const value = trigger ?? '';
  if (Array.from(select.options).some((option) => option.value === value && option.index > 0)) return;
  const option = element('option', '', trigger ?? '(no trigger)');
  option.value = value;
  select.append(option);
}

export function listItem(delivery: Delivery): HTMLLIElement {
  const item = element('li', `delivery ${delivery.verdict}${delivery.duplicate ? ' duplicate' : ''}`);
  item.dataset.seq = String(delivery.seq);
  item.tabIndex = 0;
  item.append(
    element('span', 'time', new Date(delivery.receivedAt).toLocaleTimeString()),
    element('span', 'status', String(delivery.status)),
    element('span', 'trigger', delivery.trigger ?? '(no trigger)'),
    element('span', 'verdict', delivery.duplicate ? `${delivery.verdict} · duplicate` : delivery.verdict),
    element('span', 'fields', delivery.fields.map(([label, value]) => `${label}=${value}`).join(' ')),
  );
  item.addEventListener('click', () => showDelivery(delivery, false));
  item.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' && event.key !== ' ') return;
    event.preventDefault();
    showDelivery(delivery, true);
  });
  return item;
}

/** Adds a delivery to the list, newest first; one already listed (a reconnect may repeat it) is skipped. */
export function addDelivery(delivery: Delivery): void {
  state.last = Math.max(state.last, delivery.seq);
  if (state.deliveries.has(delivery.seq)) return;
  state.deliveries.set(delivery.seq, delivery);
  addTriggerOption(delivery.trigger);
  const list = document.getElementById('deliveries') as HTMLOListElement;
  const item = listItem(delivery);
  item.hidden = !matches(delivery);
  // Newest first: above every delivery with a lower number.
  const older = Array.from(list.children).find((child) => Number((child as HTMLElement).dataset.seq) < delivery.seq);
  list.insertBefore(item, older ?? null);
  applyFilters();
}

/** A word for a POSIX shell: as it is when nothing in it is special, otherwise in single quotes. */
export function shellQuote(text: string): string {
  return /^[\w.\/:@%+=,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** `--user NAME --password "$CHAT_WEBHOOKS_PASSWORD"` when `listen` requires credentials: the page never has the password. */
export function credentialFlags(): string {
  const user = state.config.user;
  return user === undefined ? '' : ` --user ${shellQuote(user)} --password "$CHAT_WEBHOOKS_PASSWORD"`;
}

/** The `send` line of the empty state, with the credentials flags `listen` requires. */
export function showHint(): void {
  (document.getElementById('hint') as HTMLElement).textContent = `npx chat-webhooks send message_sent --url ${location.origin}/${credentialFlags()}`;
}
