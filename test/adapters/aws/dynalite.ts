/**
 * DynamoDB for the tests: dynalite (DynamoDB's API on LevelDB, in memory here) on a free port, and the real
 * `@aws-sdk/client-dynamodb` client against it.
 */
import { createRequire } from 'node:module';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';

const dynalite = createRequire(import.meta.url)('dynalite') as (options: { createTableMs: number }) => Server;

export interface Dynamo {
  client: DynamoDBClient;
  /** http://127.0.0.1:<port> */
  endpoint: string;
  /** Creates a table as the example's template does: partition key `id` (String). */
  table(name: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startDynalite(): Promise<Dynamo> {
  const server = dynalite({ createTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
  });
  return {
    client,
    endpoint,
    async table(name) {
      await client.send(
        new CreateTableCommand({
          TableName: name,
          AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      return name;
    },
    async stop() {
      client.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
