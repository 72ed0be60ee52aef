/**
 * zod off the happy path (issue 37): the generated validators accept an event without it, and only a rejection
 * needs zod's schemas, to explain it with the issues (paths and messages) onError gets. They are loaded on the
 * first rejection, once: synchronously where the runtime can (Node's require() of an ES module), else
 * asynchronously, the receiver answering that delivery once they are there.
 */
import { loadOwnSync } from '#platform';
import type { Explain } from './zod-explain.js';

export type { Explain } from './zod-explain.js';

let explain: Explain | undefined;
let loading: Promise<Explain> | undefined;

/** Set by whoever loads zod's side anyway (chat-webhooks/schemas), so that nothing loads it twice. */
export function registerExplainer(explainer: Explain): void {
  explain = explainer;
}

/** The explainer if it is loaded or can be loaded now, synchronously; undefined until it is. */
export function explainerNow(): Explain | undefined {
  if (explain) return explain;
  let module: { explain?: Explain } | undefined;
  try {
    module = loadOwnSync(new URL('./zod-explain.js', import.meta.url).href) as typeof module;
  } catch {
    // A bundle for a Worker may leave import.meta.url undefined: the asynchronous import is the way there.
  }
  if (module?.explain) explain = module.explain;
  return explain;
}

/** Loads the explainer (zod and the schemas), once. */
export function loadExplainer(): Promise<Explain> {
  if (explain) return Promise.resolve(explain);
  loading ??= import('./zod-explain.js').then(
    (module) => (explain = module.explain),
    (cause: unknown) => {
      loading = undefined;
      throw cause;
    },
  );
  return loading;
}
