/**
 * The AWS SDK clients, loaded on first use: `@aws-sdk/client-sqs` and `@aws-sdk/client-dynamodb` are optional
 * peers, and an application that uses only one of them (only the receiver, say) needs only that one installed.
 * Lambda's Node.js runtimes include both; elsewhere a missing one is named as the other entries name their
 * peers (`chat-webhooks/aws needs its optional peer @aws-sdk/client-sqs: npm install @aws-sdk/client-sqs`).
 */
import { missingPeerError, notInstalled } from '../../src/platform/peer.js';

type SqsModule = typeof import('@aws-sdk/client-sqs');
type DynamoModule = typeof import('@aws-sdk/client-dynamodb');

let sqs: Promise<SqsModule> | undefined;
let dynamo: Promise<DynamoModule> | undefined;

// One name per peer, which both picks its import and names it when missing (a second copy of the name could
// drift unseen: only a package without the peer shows it). The specifiers stay literal for bundlers.
interface Modules {
  '@aws-sdk/client-sqs': SqsModule;
  '@aws-sdk/client-dynamodb': DynamoModule;
}
const IMPORTS: { [P in keyof Modules]: () => Promise<Modules[P]> } = {
  '@aws-sdk/client-sqs': () => import('@aws-sdk/client-sqs'),
  '@aws-sdk/client-dynamodb': () => import('@aws-sdk/client-dynamodb'),
};
const load = <P extends keyof Modules>(peer: P): Promise<Modules[P]> => named(peer, IMPORTS[peer]());

export const loadSqs = (): Promise<SqsModule> => (sqs ??= load('@aws-sdk/client-sqs'));
export const loadDynamo = (): Promise<DynamoModule> => (dynamo ??= load('@aws-sdk/client-dynamodb'));

/** The loading, its failure named when the peer itself is not installed (not when something it needs is). */
export function named<T>(peer: string, loading: Promise<T>): Promise<T> {
  return loading.catch((cause: unknown) => {
    throw notInstalled(cause, peer) ? missingPeerError('chat-webhooks/aws', [peer], cause) : cause;
  });
}

/**
 * The client given in the options, or one of the SDK's made now; a failure to make it (a missing SDK) is each
 * use's to report, not an unhandled rejection as the function starts.
 */
export function clientOf<C>(given: C | undefined, make: () => Promise<C>): Promise<C> {
  if (given) return Promise.resolve(given);
  const made = make();
  made.catch(() => undefined);
  return made;
}
