/**
 * examples/aws as deployed, short of AWS: the receiver and consumer handler files, unchanged, with their
 * clients made from the environment as on Lambda (AWS_ENDPOINT_URL_SQS / _DYNAMODB pointing at the local
 * SQS endpoint and dynalite: no real SQS runs here), and the SAM template checked for what they need.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AUTH, PASSWORD, USER, fixture } from '../adapters/status-table.js';
import { httpApiEvent, lambdaContext } from '../adapters/lambda-events.js';
import { startDynalite, type Dynamo } from '../adapters/aws/dynalite.js';
import { deliver, SqsSimulator, type SimulatedQueue as Queue } from '../support/sqs-simulator/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const example = join(root, 'examples/aws');
const template = readFileSync(join(example, 'template.yaml'), 'utf8');

type Handler = (event: unknown, context: unknown) => Promise<{ statusCode?: number; batchItemFailures?: unknown[] }>;
let sqs: SqsSimulator;
let dynamo: Dynamo;
let queue: Queue;
let folder: string;
let receiver: Handler;
let consumer: Handler;
const saved = { ...process.env };

beforeAll(async () => {
  if (!existsSync(join(root, 'dist/adapters/aws/index.js'))) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root });
  [sqs, dynamo] = await Promise.all([new SqsSimulator().start(), startDynalite()]);
  queue = sqs.queue('stack-events.fifo', 5);
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_ENDPOINT_URL_SQS: sqs.origin,
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    QUEUE_URL: queue.url,
    TABLE_NAME: await dynamo.table('stack-IdempotencyTable'),
    WEBHOOK_USERNAME: USER,
    WEBHOOK_PASSWORD: PASSWORD,
  });
  // Inside the repository without a package.json of its own, so that 'chat-webhooks' is this package (dist/).
  folder = mkdtempSync(join(root, '.aws-example-'));
  for (const file of ['receiver.mjs', 'consumer.mjs', 'handlers.mjs']) cpSync(join(example, file), join(folder, file));
  receiver = (await import(pathToFileURL(join(folder, 'receiver.mjs')).href)).handler;
  consumer = (await import(pathToFileURL(join(folder, 'consumer.mjs')).href)).handler;
}, 120_000);

afterAll(async () => {
  process.env = saved;
  rmSync(folder, { recursive: true, force: true });
  await Promise.all([sqs.stop(), dynamo.stop()]);
});

describe('examples/aws', () => {
  it('receiver → queue → consumer: handled once, the repeat dropped by the FIFO queue, a wrong password refused', async () => {
    const delivery = { method: 'POST', headers: { 'content-type': 'application/json', authorization: AUTH }, body: fixture('message_sent') };
    expect((await receiver(httpApiEvent(delivery), lambdaContext(5000))).statusCode).toBe(200);
    expect((await receiver(httpApiEvent(delivery), lambdaContext(5000))).statusCode).toBe(200);
    const wrong = { ...delivery, headers: { ...delivery.headers, authorization: `Basic ${Buffer.from(`${USER}:nope`).toString('base64')}` } };
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    expect((await receiver(httpApiEvent(wrong), lambdaContext(5000))).statusCode).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(errors.mock.calls.map((call) => JSON.parse(String(call[0])).error)).toEqual(['unauthorized']);
    expect(queue.messages).toHaveLength(1);

    const sent = { ...(queue.messages[0] as (typeof queue.messages)[number]) };
    const logs = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const { failed } = await deliver(queue, consumer as never, 10, 30_000);
    expect(failed).toEqual([]);
    const lines = logs.mock.calls.map((call) => JSON.parse(String(call[0])));
    expect(lines.filter((line) => line.handled === 'message_sent')).toEqual([
      expect.objectContaining({ attempt: 1, text: JSON.parse(fixture('message_sent')).data.message.data.text }),
    ]);
    // The same message handed out again (SQS delivers at least once): DynamoDB knows its key.
    queue.send({ Id: 'again', MessageBody: sent.body, MessageAttributes: sent.attributes, MessageGroupId: sent.groupId as string, MessageDeduplicationId: 'redelivered' });
    await deliver(queue, consumer as never, 10, 30_000);
    expect(logs.mock.calls.map((call) => JSON.parse(String(call[0]))).filter((line) => line.duplicate)).toHaveLength(1);
    logs.mockRestore();
    errors.mockRestore();
  });

  it('the template wires what the handlers need', () => {
    expect(template).toContain('Handler: receiver.handler');
    expect(template).toContain('Handler: consumer.handler');
    for (const variable of ['QUEUE_URL', 'TABLE_NAME', 'WEBHOOK_USERNAME', 'WEBHOOK_PASSWORD']) {
      expect(template, variable).toMatch(new RegExp(`${variable}: !Ref`));
    }
    expect(template).toMatch(/FunctionResponseTypes:\s+- ReportBatchItemFailures/);
    expect(template).toMatch(/FifoQueue: true[\s\S]*RedrivePolicy:[\s\S]*maxReceiveCount: \d+/);
    const visibility = Number(/VisibilityTimeout: (\d+)/.exec(template)?.[1]);
    const consumerTimeout = Number(/Handler: consumer\.handler\s+Timeout: (\d+)/.exec(template)?.[1]);
    expect(visibility).toBeGreaterThanOrEqual(6 * consumerTimeout);
    expect(template).toMatch(/KeySchema:\s+- AttributeName: id\s+KeyType: HASH/);
    expect(template).toMatch(/TimeToLiveSpecification:\s+AttributeName: expiresAt\s+Enabled: true/);
    expect(template).toMatch(/Path: \/webhooks\s+Method: POST/);
  });
});
