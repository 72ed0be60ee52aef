/**
 * The live page's script: every function of client.ts, client-json.ts and client-actions.ts as source text (each module
 * exports all of its functions, so none is left behind), the state they share, then the call that starts the
 * page. Constant for a given build, so the page's Content-Security-Policy allows it by its hash (guard.ts).
 */
import * as actions from './client-actions.js';
import * as json from './client-json.js';
import * as rendering from './client.js';

export function clientScript(): string {
  const functions = [...Object.values(rendering), ...Object.values(json), ...Object.values(actions)].filter((value) => typeof value === 'function');
  return `'use strict';\n${functions.map(String).join('\n')}\nconst state = createState();\nstartPage();`;
}
