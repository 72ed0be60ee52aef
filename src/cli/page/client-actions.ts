/**
 * The live page's actions, run in the browser: copy (payload, `curl`, `chat-webhooks send --file`), resend
 * to `--forward`, pause, clear, download as NDJSON, the toolbar's filters and the live feed. Shipped as
 * source text with client.ts (client-script.ts), under the same rules.
 */
import { onFoldClick } from './client-json.js';
import { addDelivery, applyFilters, credentialFlags, pretty, shellQuote, showHint, type Delivery, type PageState } from './client.js';

declare const state: PageState;

/** A line of news about the last action: it goes after a few seconds (a newer one restarts the clock). */
export function notify(text: string): void {
  const notice = document.getElementById('notice') as HTMLElement;
  notice.textContent = text;
  clearTimeout(state.noticeTimer);
  state.noticeTimer = setTimeout(() => (notice.textContent = ''), 4000);
}

/**
 * printf's arguments writing `text` byte for byte, as text a terminal takes as text: with a control character
 * other than the line feed in it (a refused delivery's body can hold any), `%b` and each byte of those as a
 * `\0ooo` escape. Raw, they were keys when the command was pasted: `ESC[201~` ends bash's bracketed paste,
 * then Ctrl-A and text put a command of the sender's before the line, and a CR ran it. (The page's script is
 * the modules' exported functions alone: the patterns live in here.)
 */
export function printfArguments(text: string): string {
  const control = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;
  if (!control.test(text)) return `'%s' ${shellQuote(text)}`;
  const octal = (c: string) => Array.from(new TextEncoder().encode(c), (byte) => `\\0${byte.toString(8).padStart(3, '0')}`).join('');
  return `'%b' ${shellQuote(text.replace(/\\/g, '\\\\').replace(control, octal))}`;
}

/**
 * The body goes to curl's stdin from printf (a shell builtin: no size limit, the exact bytes), never as an
 * argument: curl reads an argument `@name` as a file to upload, so a delivered body `@.env` would send the
 * developer's `.env`, and one argument of an exec is limited to 128 KiB. `--globoff`: curl would otherwise
 * make `{a,b}` or `[1-9]` in the delivered path several requests to other paths.
 */
export function curlCommand(delivery: Delivery): string {
  const parts = ['curl', '--globoff', '-X', shellQuote(delivery.method), shellQuote(`${location.origin}${delivery.path}`)];
  const type = delivery.headers['content-type'];
  if (type !== undefined) parts.push('-H', shellQuote(`Content-Type: ${type}`));
  if (delivery.headers.authorization !== undefined && state.config.user !== undefined) {
    parts.push('-u', `${shellQuote(state.config.user)}:"$CHAT_WEBHOOKS_PASSWORD"`);
  }
  return `printf ${printfArguments(delivery.rawBody)} | ${parts.join(' ')} --data-binary @-`;
}

/** Writes the body to a file byte for byte (printf is a shell builtin: no size limit), then sends it. */
export function sendCommand(delivery: Delivery): string {
  const file = `delivery-${delivery.seq}.json`;
  return (
    `printf ${printfArguments(delivery.rawBody)} > ${file}\n` +
    `npx chat-webhooks send --file ${file} --url ${shellQuote(`${location.origin}${delivery.path}`)}${credentialFlags()}`
  );
}

/** Copies to the clipboard; where the browser refuses, shows the text selected for Ctrl-C instead. */
export function copy(text: string, what: string): void {
  const fallback = () => {
    const area = document.getElementById('copy-fallback') as HTMLTextAreaElement;
    area.hidden = false;
    area.value = text;
    area.focus();
    area.select();
    notify(`Copy ${what} with Ctrl-C (the browser refused the clipboard).`);
  };
  if (!navigator.clipboard) return fallback();
  navigator.clipboard.writeText(text).then(() => notify(`Copied ${what}.`), fallback);
}

export async function resend(delivery: Delivery): Promise<void> {
  notify(`Resending #${delivery.seq}…`);
  try {
    const answer = await fetch(`_listen/resend/${delivery.seq}`, { method: 'POST' });
    const result = (await answer.json()) as { status?: number; ms?: number; error?: string };
    const outcome = result.status !== undefined ? `${result.status} (${Math.round(result.ms ?? 0)} ms)` : `failed: ${result.error}`;
    notify(`Resent #${delivery.seq} to ${state.config.forward}: ${outcome}`);
  } catch (error) {
    notify(`Resend failed: ${String(error)}`);
  }
}

/** The detail pane's buttons, by their `data-action`. */
export function onDetailAction(event: Event): void {
  const action = (event.target as HTMLElement).closest('button')?.dataset.action;
  const seq = Number((document.getElementById('detail') as HTMLElement).dataset.seq);
  const delivery = state.deliveries.get(seq);
  if (!action || !delivery) return;
  if (action === 'copy-payload') copy(pretty(delivery.rawBody), 'the payload');
  if (action === 'copy-curl') copy(curlCommand(delivery), 'a curl command');
  if (action === 'copy-send') copy(sendCommand(delivery), 'a chat-webhooks send command');
  if (action === 'resend') void resend(delivery);
}

/** Everything held, oldest first, one JSON record a line: what `listen --json` writes and `replay` reads. */
export function download(): void {
  const records = Array.from(state.deliveries.values()).sort((a, b) => a.seq - b.seq);
  const blob = new Blob(records.map((record) => `${JSON.stringify(record)}\n`), { type: 'application/x-ndjson' });
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = `chat-webhooks-listen-${new Date().toISOString().replace(/[:.]/g, '-')}.ndjson`;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 1_000);
  notify(`Downloaded ${records.length} deliveries as NDJSON.`);
}

export function togglePause(): void {
  const button = document.getElementById('pause') as HTMLButtonElement;
  state.paused = !state.paused;
  button.setAttribute('aria-pressed', String(state.paused));
  if (state.paused) {
    button.textContent = 'Resume';
    return;
  }
  for (const delivery of state.queued.splice(0)) addDelivery(delivery);
  button.textContent = 'Pause';
}

/** Forgets what the page shows (this page only: `listen` keeps its history, a reload shows it again). */
export function clearAll(): void {
  state.deliveries.clear();
  state.queued = [];
  (document.getElementById('deliveries') as HTMLElement).replaceChildren();
  const detail = document.getElementById('detail') as HTMLElement;
  detail.replaceChildren(document.createTextNode('Select a delivery to see its headers, payload and validation issues.'));
  delete detail.dataset.seq;
  applyFilters();
  notify('Cleared.');
}

export function received(delivery: Delivery): void {
  state.last = Math.max(state.last, delivery.seq);
  if (!state.paused) return addDelivery(delivery);
  state.queued.push(delivery);
  (document.getElementById('pause') as HTMLButtonElement).textContent = `Resume (${state.queued.length} new)`;
}

/** Connects to `/events` for what came after the deliveries the page was rendered with. */
export function connect(): void {
  const indicator = document.getElementById('state') as HTMLElement;
  const source = new EventSource(`events?after=${state.last}`);
  source.addEventListener('hello', (event) => {
    const { instance } = JSON.parse((event as MessageEvent<string>).data) as { instance: string };
    // `listen` was restarted: its numbering started over, so what the page holds is another run's.
    if (instance !== state.config.instance) location.reload();
  });
  source.addEventListener('skipped', (event) => {
    const { through } = JSON.parse((event as MessageEvent<string>).data) as { through: number };
    notify(`Some deliveries up to #${through} were dropped from listen's history before this page read them.`);
  });
  source.addEventListener('delivery', (event) => received(JSON.parse((event as MessageEvent<string>).data) as Delivery));
  source.addEventListener('open', () => (indicator.textContent = 'live'));
  source.addEventListener('error', () => (indicator.textContent = 'reconnecting…'));
}

/** Renders what the page came with, wires the controls, then goes live. */
export function startPage(): void {
  showHint();
  for (const delivery of state.config.records) addDelivery(delivery);
  applyFilters();
  for (const id of ['filter-trigger', 'filter-status']) (document.getElementById(id) as HTMLElement).addEventListener('change', applyFilters);
  (document.getElementById('search') as HTMLElement).addEventListener('input', applyFilters);
  (document.getElementById('pause') as HTMLElement).addEventListener('click', togglePause);
  (document.getElementById('clear') as HTMLElement).addEventListener('click', clearAll);
  (document.getElementById('download') as HTMLElement).addEventListener('click', download);
  (document.getElementById('detail') as HTMLElement).addEventListener('click', onDetailAction);
  (document.getElementById('detail') as HTMLElement).addEventListener('click', onFoldClick);
  connect();
}
