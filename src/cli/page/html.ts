/**
 * The live page `listen` serves at `/`: one HTML document, its style and script inline and allowed by hash
 * (guard.ts), the newest deliveries in a JSON data block so the page shows them before the feed connects.
 */
import type { Captured } from '../captured.js';
import { clientScript } from './client-script.js';

export const STYLE = `
  :root { color-scheme: light dark; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --line: #8884; --focus: #0969da; }
  * { box-sizing: border-box; }
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.2fr); grid-template-rows: auto minmax(0, 1fr); height: 100vh; }
  header { grid-column: 1 / -1; padding: 8px 16px; border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; }
  h1 { font-size: 16px; margin: 0; }
  #state { color: var(--ok); font-size: 12px; }
  .toolbar { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
  .toolbar label { display: flex; gap: 4px; align-items: center; font-size: 12px; }
  #count, #notice { color: #888; font-size: 12px; }
  main, #detail { overflow: auto; padding: 8px 16px; min-width: 0; }
  #detail { border-left: 1px solid var(--line); }
  ol { list-style: none; margin: 0; padding: 0; }
  .delivery { display: grid; grid-template-columns: auto auto minmax(0, 1fr) auto; gap: 2px 10px; padding: 6px 8px; border-bottom: 1px solid var(--line); cursor: pointer; }
  .delivery:hover, .delivery.selected { background: #8882; }
  .delivery[hidden] { display: none; }
  :focus-visible { outline: 2px solid var(--focus); outline-offset: 1px; }
  .fields { grid-column: 1 / -1; color: #888; font-size: 12px; font-family: ui-monospace, monospace; }
  .trigger { font-weight: 600; font-family: ui-monospace, monospace; }
  .trigger, .fields, .facts, .detail-title, td, code { overflow-wrap: anywhere; }
  .time { color: #888; }
  .valid .verdict { color: var(--ok); }
  .invalid .verdict, .refused .verdict, .refused .status { color: var(--bad); }
  .unknown .verdict, .duplicate .verdict { color: var(--warn); }
  pre, .payload { background: #8881; padding: 8px; font: 12px/1.45 ui-monospace, monospace; white-space: pre-wrap; overflow-wrap: anywhere; min-width: 0; }
  .j-items { padding-left: 1.6em; }
  .j-toggle { font: inherit; color: inherit; background: none; border: 0; padding: 0 2px; margin: 0; cursor: pointer; border-radius: 3px; }
  .j-toggle:hover { background: #8883; }
  .j-toggle::before { content: "▾"; display: inline-block; width: 1em; color: #888; }
  .folded > .j-toggle::before { content: "▸"; }
  .folded > .j-toggle::after { content: " " attr(data-count) " "; color: #888; }
  .folded > .j-items { display: none; }
  .j-key { color: #0969da; }
  .j-str { color: #1a7f37; }
  .j-num { color: #bc4c00; }
  .j-bool, .j-null { color: #8250df; }
  @media (prefers-color-scheme: dark) {
    .j-key { color: #79c0ff; } .j-str { color: #7ee787; } .j-num { color: #ffa657; } .j-bool, .j-null { color: #d2a8ff; }
  }
  .issue-path { color: var(--bad); }
  .facts { color: #888; font-size: 12px; }
  .actions { display: flex; flex-wrap: wrap; gap: 6px; }
  table.headers { border-collapse: collapse; font: 12px ui-monospace, monospace; width: 100%; }
  .headers th { text-align: left; vertical-align: top; padding: 2px 12px 2px 0; white-space: nowrap; font-weight: 600; width: 1%; }
  .headers td { padding: 2px 0; }
  #copy-fallback { width: 100%; min-height: 6em; font: 12px ui-monospace, monospace; }
  @media (max-width: 700px) {
    body { grid-template-columns: minmax(0, 1fr); grid-template-rows: none; height: auto; }
    #detail { border-left: none; border-top: 1px solid var(--line); }
  }
`;

const SCRIPT = clientScript();

/** A speech bubble with a check, inline: the page asks for nothing but itself (img-src allows data:). */
export const FAVICON =
  'data:image/svg+xml,' +
  encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32"><path fill="#1a7f37" d="M4 3h24a3 3 0 0 1 3 3v15a3 3 0 0 1-3 3H13l-7 6v-6H4a3 3 0 0 1-3-3V6a3 3 0 0 1 3-3z"/>' +
      '<path fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round" d="M9 13.5l4.5 4.5L23 9"/></svg>',
  );

/** The page's fixed parts, for the Content-Security-Policy's hashes. */
export const PAGE_ASSETS = { script: SCRIPT, style: STYLE };

/** JSON inside `<script type="application/json">`: no `<` may close the element or open a comment. */
const dataBlock = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');

const TOOLBAR = `<div class="toolbar">
<label>Trigger <select id="filter-trigger"><option value="">all</option></select></label>
<label>Status <select id="filter-status"><option value="">all</option><option value="2xx">2xx accepted</option><option value="4xx">4xx refused</option><option value="5xx">5xx</option><option value="invalid">invalid payload</option><option value="duplicate">duplicate</option></select></label>
<label>Search <input type="search" id="search" placeholder="payloads, keys, triggers"></label>
<button type="button" id="pause" aria-pressed="false">Pause</button>
<button type="button" id="clear">Clear</button>
<button type="button" id="download">Download NDJSON</button>
<span id="count"></span>
</div>`;

export interface PageData {
  instance: string;
  user?: string;
  forward?: string;
  records: Captured[];
}

export function pageHtml(data: PageData): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>chat-webhooks listen</title>
<link rel="icon" href="${FAVICON}">
<style>${STYLE}</style>
</head>
<body>
<header><h1>chat-webhooks · deliveries</h1><span id="state" role="status">connecting…</span>${TOOLBAR}<span id="notice" role="status" aria-live="polite"></span></header>
<main aria-label="Deliveries, newest first"><p id="empty">Waiting for deliveries. Try <code id="hint">npx chat-webhooks send message_sent --url http://localhost:3000/</code></p><ol id="deliveries"></ol>
<textarea id="copy-fallback" hidden aria-label="Text to copy"></textarea></main>
<section id="detail" aria-label="Selected delivery"><p>Select a delivery to see its headers, payload and validation issues.</p></section>
<script type="application/json" id="config">${dataBlock(data)}</script>
<script>${SCRIPT}</script>
</body>
</html>`;
}
