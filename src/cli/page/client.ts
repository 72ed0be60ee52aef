/**
 * The live page's script, run in the browser. It is typechecked here and shipped as its source text
 * (`liveFeedClient.toString()`), so it must not refer to anything outside its own body.
 */
export function liveFeedClient(): void {
  interface Issue {
    path: string;
    message: string;
  }
  interface Record {
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

  const list = document.getElementById('deliveries') as HTMLOListElement;
  const empty = document.getElementById('empty') as HTMLElement;
  const detail = document.getElementById('detail') as HTMLElement;
  const state = document.getElementById('state') as HTMLElement;
  const records = new Map<number, Record>();
  const hint = document.getElementById('hint');
  if (hint) hint.textContent = `npx chat-webhooks send message_sent --url ${location.origin}/`;

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

  function show(record: Record): void {
    for (const selected of list.querySelectorAll('.selected')) selected.classList.remove('selected');
    list.querySelector(`[data-seq="${record.seq}"]`)?.classList.add('selected');
    detail.replaceChildren();
    const title = `#${record.seq} ${record.trigger ?? '(no trigger)'} · ${record.verdict}${record.code ? ` (${record.code})` : ''}`;
    detail.append(element('h2', 'detail-title', title));
    const facts = [`status ${record.status}`, `received ${record.receivedAt}`];
    if (record.key) facts.push(`key ${record.key}`, record.duplicate ? 'duplicate: handlers not run again' : 'first delivery');
    if (record.answer) facts.push(`answer: ${record.answer}`);
    if (record.forward) facts.push(`forwarded: ${record.forward.status ?? record.forward.error} (${Math.round(record.forward.ms)} ms)`);
    detail.append(element('p', 'facts', facts.join(' · ')));
    if (record.issues.length > 0) {
      const issues = element('ul', 'issues');
      issues.id = 'issues';
      for (const issue of record.issues) {
        const item = element('li', 'issue');
        item.append(element('code', 'issue-path', issue.path), document.createTextNode(` ${issue.message}`));
        issues.append(item);
      }
      detail.append(element('h3', '', 'Validation issues'), issues);
    }
    const payload = element('pre', 'payload', pretty(record.rawBody));
    payload.id = 'payload';
    detail.append(element('h3', '', 'Payload'), payload);
  }

  function add(record: Record): void {
    if (records.has(record.seq)) return; // a reconnect replays the history
    records.set(record.seq, record);
    empty.hidden = true;
    const item = element('li', `delivery ${record.verdict}${record.duplicate ? ' duplicate' : ''}`);
    item.dataset.seq = String(record.seq);
    item.tabIndex = 0;
    const time = new Date(record.receivedAt).toLocaleTimeString();
    item.append(
      element('span', 'time', time),
      element('span', 'status', String(record.status)),
      element('span', 'trigger', record.trigger ?? '(no trigger)'),
      element('span', 'verdict', record.duplicate ? `${record.verdict} · duplicate` : record.verdict),
      element('span', 'fields', record.fields.map(([label, value]) => `${label}=${value}`).join(' ')),
    );
    item.addEventListener('click', () => show(record));
    item.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') show(record);
    });
    // Newest first: a record with a higher number goes above every lower one.
    const later = Array.from(list.children).find((child) => Number((child as HTMLElement).dataset.seq) < record.seq);
    list.insertBefore(item, later ?? null);
  }

  const source = new EventSource('events');
  source.addEventListener('delivery', (event) => add(JSON.parse((event as MessageEvent<string>).data) as Record));
  source.addEventListener('open', () => (state.textContent = 'live'));
  source.addEventListener('error', () => (state.textContent = 'reconnecting…'));
}
