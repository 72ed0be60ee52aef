/** The live page `listen` serves at `/`: one self-contained HTML document (styles and script inline). */
import { clientScript } from './client.js';

const STYLE = `
  :root { color-scheme: light dark; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --line: #8884; }
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; display: grid; grid-template-columns: minmax(320px, 1fr) 1.2fr; height: 100vh; }
  header { grid-column: 1 / -1; padding: 8px 16px; border-bottom: 1px solid var(--line); display: flex; gap: 12px; align-items: baseline; }
  h1 { font-size: 16px; margin: 0; }
  #state { color: var(--ok); font-size: 12px; }
  main, #detail { overflow: auto; padding: 8px 16px; }
  #detail { border-left: 1px solid var(--line); }
  ol { list-style: none; margin: 0; padding: 0; }
  .delivery { display: grid; grid-template-columns: auto auto 1fr auto; gap: 2px 10px; padding: 6px 8px; border-bottom: 1px solid var(--line); cursor: pointer; }
  .delivery:hover, .delivery.selected { background: #8882; }
  .fields { grid-column: 1 / -1; color: #888; font-size: 12px; font-family: ui-monospace, monospace; }
  .trigger { font-weight: 600; font-family: ui-monospace, monospace; }
  .time { color: #888; }
  .valid .verdict { color: var(--ok); }
  .invalid .verdict, .refused .verdict, .refused .status { color: var(--bad); }
  .unknown .verdict, .duplicate .verdict { color: var(--warn); }
  pre { background: #8881; padding: 8px; overflow: auto; font-size: 12px; }
  .issue-path { color: var(--bad); }
  .facts { color: #888; font-size: 12px; }
`;

export function pageHtml(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>chat-webhooks listen</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>chat-webhooks · deliveries</h1><span id="state">connecting…</span><span>newest first · click one for its payload</span></header>
<main><p id="empty">Waiting for deliveries. Try <code id="hint">npx chat-webhooks send message_sent --url http://localhost:3000/</code></p><ol id="deliveries"></ol></main>
<section id="detail"><p>Select a delivery to see its payload and validation issues.</p></section>
<script>${clientScript()}</script>
</body>
</html>`;
}
