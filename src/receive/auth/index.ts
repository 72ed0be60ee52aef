/**
 * Auth: HTTP Basic authentication of deliveries (spec 2.6 and 5), compared in constant time, with credentials
 * that may be bound to apps. The header is read by basic-credentials.ts; auth.ts checks it.
 */
export { createBasicAuthVerifier, createCredentialCheck, verifyBasicAuth } from './auth.js';
export type { Admitted, BasicAuthCredentials, BasicAuthOption, BasicAuthVerifier } from './auth.js';
