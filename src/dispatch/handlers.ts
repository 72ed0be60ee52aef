/**
 * Registering handlers: the same `on`/`onAny`/`onUnknown`/`onError`/`off` on a receiver (createWebhooks) and a
 * worker (createWorker), both over a Dispatcher.
 */
import type { EventOf, ParsedWebhook, Trigger, UnknownWebhookEvent } from '../events/index.js';
import { ANY, UNKNOWN, type AnyHandler, type Dispatcher, type HandlerContext } from './dispatcher.js';
import type { WebhookError } from './errors.js';

/** `C`: what handlers get beside the event (a worker with `transaction: true` gives a `TransactionContext`). */
export interface HandlerRegistry<C extends HandlerContext = HandlerContext> {
  /** Handles one trigger, or several: the handler gets the event typed by trigger, and its context. */
  on<T extends Trigger>(trigger: T | readonly T[], handler: (event: EventOf<T>, context: C) => unknown): this;
  /** Handles every accepted event, known or not. */
  onAny(handler: (event: ParsedWebhook, context: C) => unknown): this;
  /** Handles events whose trigger this version does not know. */
  onUnknown(handler: (event: UnknownWebhookEvent, context: C) => unknown): this;
  /** Receives every failure: rejected requests, invalid payloads, failed or overdue handlers. */
  onError(handler: (error: WebhookError) => unknown): this;
  /** Removes a handler: from one trigger or several, or from everything it was registered for. */
  off(trigger: Trigger | readonly Trigger[], handler: (event: never, context: never) => unknown): this;
  off(handler: ((event: never, context: never) => unknown) | ((error: WebhookError) => unknown)): this;
}

/** The registry's methods over a dispatcher, to spread into a receiver or a worker (each returns `this`). */
export function registrationMethods<Self extends Record<keyof HandlerRegistry, unknown>>(dispatcher: Dispatcher): Pick<Self, keyof HandlerRegistry> {
  const methods: HandlerRegistry = {
    on(trigger, handler) {
      dispatcher.onTriggers(trigger, handler as unknown as AnyHandler);
      return this;
    },
    onAny(handler) {
      dispatcher.on(ANY, handler, 'onAny');
      return this;
    },
    onUnknown(handler) {
      dispatcher.on(UNKNOWN, handler as unknown as AnyHandler, 'onUnknown');
      return this;
    },
    onError(handler) {
      dispatcher.onError(handler);
      return this;
    },
    off(triggerOrHandler: unknown, handler?: unknown) {
      dispatcher.offTriggers(triggerOrHandler, handler);
      return this;
    },
  };
  // Each method returns `this`: whatever object the methods are spread into.
  return methods as unknown as Pick<Self, keyof HandlerRegistry>;
}
