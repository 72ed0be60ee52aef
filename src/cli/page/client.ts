/**
 * The live page's script, run in the browser. Its functions are typechecked here and shipped as their
 * source text (`clientScript()`), so each may refer only to the others listed there and to browser globals.
 */

interface Issue {
  path: string;
  message: string;
}

/** What `listen` publishes of a delivery (src/cli/captured.ts), as far as the page shows it. */
interface Delivery {
  seq: number;
  receivedAt: string;
  status: number;
  verdict: 'valid' | 'unknown' | 'invalid' | 'refused';
  code?: string;
  answer?: string;
  trigger?: string;
  fields: [string, string][];
  issues: Issue[];
  key?: string;
  duplicate: boolean;
  rawBody: string;
  forward?: { status?: number; ms: number; error?: string };
}

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function pretty(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

function factsOf(delivery: Delivery): string {
  const facts = [`status ${delivery.status}`, `received ${delivery.receivedAt}`];
  if (delivery.key) {
    const repeat = delivery.verdict === 'invalid' ? 'not stored: invalid' : delivery.duplicate ? 'duplicate: handlers not run again' : 'first delivery';
    facts.push(`key ${delivery.key}`, repeat);
  }
  if (delivery.answer) facts.push(`answer: ${delivery.answer}`);
  if (delivery.forward) facts.push(`forwarded: ${delivery.forward.status ?? delivery.forward.error} (${Math.round(delivery.forward.ms)} ms)`);
  return facts.join(' · ');
}

/** Fills the detail pane: title, facts, validation issues (with paths), the payload. */
function showDelivery(delivery: Delivery): void {
  const list = document.getElementById('deliveries') as HTMLOListElement;
  const detail = document.getElementById('detail') as HTMLElement;
  for (const selected of list.querySelectorAll('.selected')) selected.classList.remove('selected');
  list.querySelector(`[data-seq="${delivery.seq}"]`)?.classList.add('selected');
  detail.replaceChildren();
  const title = `#${delivery.seq} ${delivery.trigger ?? '(no trigger)'} · ${delivery.verdict}${delivery.code ? ` (${delivery.code})` : ''}`;
  detail.append(element('h2', 'detail-title', title), element('p', 'facts', factsOf(delivery)));
  if (delivery.issues.length > 0) {
    const issues = element('ul', 'issues');
    issues.id = 'issues';
    for (const issue of delivery.issues) {
      const item = element('li', 'issue');
      item.append(element('code', 'issue-path', issue.path), document.createTextNode(` ${issue.message}`));
      issues.append(item);
    }
    detail.append(element('h3', '', 'Validation issues'), issues);
  }
  const payload = element('pre', 'payload', pretty(delivery.rawBody));
  payload.id = 'payload';
  detail.append(element('h3', '', 'Payload'), payload);
}

/** Adds a delivery to the list, newest first; one already listed (a reconnect replays history) is skipped. */
function addDelivery(delivery: Delivery): void {
  const list = document.getElementById('deliveries') as HTMLOListElement;
  if (list.querySelector(`[data-seq="${delivery.seq}"]`)) return;
  (document.getElementById('empty') as HTMLElement).hidden = true;
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
  item.addEventListener('click', () => showDelivery(delivery));
  item.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') showDelivery(delivery);
  });
  // Newest first: above every delivery with a lower number.
  const older = Array.from(list.children).find((child) => Number((child as HTMLElement).dataset.seq) < delivery.seq);
  list.insertBefore(item, older ?? null);
}

function startLiveFeed(): void {
  const state = document.getElementById('state') as HTMLElement;
  const hint = document.getElementById('hint');
  if (hint) hint.textContent = `npx chat-webhooks send message_sent --url ${location.origin}/`;
  const source = new EventSource('events');
  source.addEventListener('delivery', (event) => addDelivery(JSON.parse((event as MessageEvent<string>).data) as Delivery));
  source.addEventListener('open', () => (state.textContent = 'live'));
  source.addEventListener('error', () => (state.textContent = 'reconnecting…'));
}

/** The page's script: the functions above as source, then the call that starts it. */
export function clientScript(): string {
  return [element, pretty, factsOf, showDelivery, addDelivery, startLiveFeed].map(String).join('\n') + '\nstartLiveFeed();';
}
