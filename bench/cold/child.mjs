// One cold start, in a fresh process (bench/cold.mjs runs it): imports a bundled receiver and answers its first
// delivery; prints the two times in ms as JSON. `node child.mjs <bundle> <ours|octokit>`.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [bundle, kind] = process.argv.slice(2);
const fixture = readFileSync(new URL('../../fixtures/message_sent.json', import.meta.url), 'utf8');
const octokitBody = JSON.stringify({ action: 'opened', issue: { number: 1, title: 'x' }, repository: { id: 1 }, sender: { login: 'a' } });
// Prepared before the clock starts: what the platform (or GitHub) sent.
const delivery =
  kind === 'ours'
    ? {
        version: '2.0',
        rawPath: '/webhooks',
        requestContext: { http: { method: 'POST' } },
        headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` },
        body: fixture,
        isBase64Encoded: false,
      }
    : {
        headers: { 'x-github-event': 'issues', 'x-github-delivery': '1', 'x-hub-signature-256': `sha256=${createHmac('sha256', 'secret').update(octokitBody).digest('hex')}` },
        body: octokitBody,
      };
const context = { getRemainingTimeInMillis: () => 30_000, callbackWaitsForEmptyEventLoop: true };

const start = performance.now();
const { handler } = await import(pathToFileURL(bundle).href);
const imported = performance.now();
const result = await handler(delivery, context);
const answered = performance.now();
if (result.statusCode !== 200) throw new Error(`${kind}: ${result.statusCode} ${result.body}`);
console.log(JSON.stringify({ import: imported - start, first: answered - imported }));
