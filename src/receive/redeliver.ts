/**
 * `webhooks.redeliver(body)`: a body the platform did not deliver (reconcile rebuilds it from the list of
 * messages) taken exactly as a delivery's after admission, whose checks are about the HTTP request: parse,
 * validation, the key, the inbox or the in-memory window, onDuplicate, the handlers. It resolves once that
 * work is over, with what became of the body, which a 200 alone would not say.
 */
import type { Answers } from './intake/answers.js';
import { Errand } from './intake/in-flight.js';
import type { Intake, Replay } from './intake/intake.js';
import type { WebhookResponse } from './http.js';
import type { RedeliverOptions, Redelivery } from './redelivery.js';

export type { RedeliverOptions, Redelivery } from './redelivery.js';

export function redeliverer(intake: Intake, answers: Answers, durable: boolean): (body: string, options?: RedeliverOptions) => Promise<Redelivery> {
  return async function redeliver(body, options = {}) {
    const replay: Replay = { source: options.source ?? 'reconcile', duplicate: false };
    let response: WebhookResponse;
    try {
      response = await intake.replay(body, replay);
    } catch (cause) {
      response = answers.failed(cause);
    }
    // No adapter sends this response: its work (handlers, onError, onDuplicate) starts here, and is waited for.
    if (response instanceof Errand) response.start();
    await response.done;
    if (response.status !== 200) return { outcome: 'refused', status: response.status, code: codeOf(response) };
    if (replay.duplicate) return { outcome: 'duplicate', status: 200 };
    return { outcome: durable ? 'stored' : 'handled', status: 200 };
  };
}

function codeOf(response: WebhookResponse): string | undefined {
  const code = (response as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}
