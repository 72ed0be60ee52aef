/**
 * DynamoDB for the tests: dynalite (DynamoDB's API on LevelDB, in memory here) on a free port, and the real
 * `@aws-sdk/client-dynamodb` client against it.
 */
import { createRequire } from 'node:module';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';

const dynalite = createRequire(import.meta.url)('dynalite') as (options: { createTableMs: number }) => Server;

export interface Dynamo {
  client: DynamoDBClient;
  /** http://127.0.0.1:<port> */
  endpoint: string;
  /** Creates a table as the example's template does (partition key `id`, String) and waits until it is ACTIVE. */
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
      // dynalite, like DynamoDB, answers "not found" to reads and writes while a table is CREATING; it turns
      // ACTIVE on a timer, which a busy machine can run after the test's first write.
      for (let polls = 0; ; polls++) {
        const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
        if (Table?.TableStatus === 'ACTIVE') return name;
        if (polls === 1000) throw new Error(`dynalite: table ${name} is still ${Table?.TableStatus} after 1000 looks`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    async stop() {
      client.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
