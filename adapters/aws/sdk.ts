/**
 * The AWS SDK clients, loaded on first use: `@aws-sdk/client-sqs` and `@aws-sdk/client-dynamodb` are optional
 * peers, and an application that uses only one of them (only the receiver, say) needs only that one installed.
 */
type SqsModule = typeof import('@aws-sdk/client-sqs');
type DynamoModule = typeof import('@aws-sdk/client-dynamodb');

let sqs: Promise<SqsModule> | undefined;
let dynamo: Promise<DynamoModule> | undefined;

export const loadSqs = (): Promise<SqsModule> => (sqs ??= import('@aws-sdk/client-sqs'));
export const loadDynamo = (): Promise<DynamoModule> => (dynamo ??= import('@aws-sdk/client-dynamodb'));
