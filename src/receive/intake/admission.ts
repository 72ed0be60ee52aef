/**
 * Admission checks: what the headers alone decide, before any of the body is read (shutting down, method,
 * declared size, content type, Basic auth). Credentials bound to apps admit the request for those apps only:
 * intake compares them with the envelope's `appId` once the body is parsed.
 */
import { Answers, CLOSE, reply, UNAUTHORIZED_HEADERS } from './answers.js';
import { AppBinding } from '../auth/auth.js';
import { WebhookError } from '../../dispatch/errors.js';
import {
  isIdentityEncoding,
  isJsonContentType,
  admissionHeaders as read,
  type WebhookRequest,
  type WebhookResponse,
} from '../http.js';
import type { InFlight } from './in-flight.js';
import type { Settings } from '../options.js';

/** A method in any letter case (node passes it as sent). */
function isPost(method: string): boolean {
  return method.toUpperCase() === 'POST';
}

export class Admission {
  constructor(
    private readonly settings: Settings,
    private readonly answers: Answers,
    private readonly inFlight: InFlight,
  ) {}

  /**
   * The response refusing the request; or, when its body may be read, undefined (for any app) or the apps its
   * credentials are bound to.
   */
  admit(request: WebhookRequest): WebhookResponse | AppBinding | undefined {
    if (this.inFlight.closing) return this.answers.shuttingDown();
    const { method, headers } = request;
    // Upper-cased only when it is not already `POST` as sent: toUpperCase makes a new string every time.
    if (method !== 'POST' && !isPost(method)) {
      // Not a delivery (a browser, a health check on the wrong path), so not onError's; but a sender configured
      // with the wrong method would otherwise leave no trace at all.
      this.settings.logger.debug?.({ status: 405, method: method.slice(0, 20) }, 'Refused a webhook request: deliveries must use POST.');
      return reply(405, 'Webhook deliveries must use POST.', { allow: 'POST' });
    }
    // Without the header, Number(undefined) is NaN: never too large.
    if (Number(read.contentLength(headers)) > this.settings.maxBodyBytes) return this.answers.tooLarge();
    const contentType = read.contentType(headers);
    if (contentType && !isJsonContentType(contentType)) {
      return this.answers.refuse(
        new WebhookError('unsupported_media_type', `Webhook deliveries are JSON; got Content-Type "${contentType.slice(0, 100)}".`),
        CLOSE,
      );
    }
    const encoding = read.contentEncoding(headers);
    if (encoding !== undefined && !isIdentityEncoding(encoding)) {
      return this.answers.refuse(
        new WebhookError('unsupported_media_type', `Webhook deliveries are not compressed; got Content-Encoding "${encoding.slice(0, 100)}".`),
        CLOSE,
      );
    }
    const { verify } = this.settings;
    // An Authorization sent twice (node's headersDistinct passes each) reads as its values joined with ", ",
    // which is never one Basic credential: refused like any wrong one.
    if (verify) {
      const admitted = verify(read.authorization(headers));
      if (admitted === false) {
        return this.answers.refuse(
          new WebhookError('unauthorized', 'The request lacks valid Basic credentials for this webhook.'),
          UNAUTHORIZED_HEADERS,
        );
      }
      if (admitted instanceof AppBinding) return admitted;
    }
    return undefined;
  }
}
