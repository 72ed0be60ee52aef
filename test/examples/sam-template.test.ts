/**
 * examples/aws/template.yaml checked as far as a machine without AWS can: parsed as CloudFormation YAML (its
 * short-form tags read as the intrinsic functions they stand for), every reference resolving to something the
 * template or CloudFormation defines, and the settings the consumer's delivery guarantees rest on. A regex over
 * the text (test/examples/aws-example.test.ts) cannot tell a `!Ref` to a resource that was renamed away.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, type ScalarTag, type CollectionTag } from 'yaml';

const example = fileURLToPath(new URL('../../examples/aws/', import.meta.url));

type Node = unknown;
interface Resource {
  Type: string;
  Properties?: Record<string, Node>;
}
interface Template {
  Parameters?: Record<string, unknown>;
  Globals?: { Function?: Record<string, Node> };
  Resources: Record<string, Resource>;
  Outputs?: Record<string, { Value: Node }>;
}

// The short forms CloudFormation accepts, each read into its long form ({ Ref: … }, { 'Fn::GetAtt': … }).
const intrinsic = (tag: string, name: string): (ScalarTag | CollectionTag)[] => [
  { tag: `!${tag}`, resolve: (value: string) => ({ [name]: name === 'Fn::GetAtt' ? value.split('.') : value }) },
  { tag: `!${tag}`, collection: 'seq', resolve: (value) => ({ [name]: (value as { toJSON(): unknown }).toJSON() }) },
  { tag: `!${tag}`, collection: 'map', resolve: (value) => ({ [name]: (value as { toJSON(): unknown }).toJSON() }) },
];
const customTags = [
  ...intrinsic('Ref', 'Ref'),
  ...['GetAtt', 'Sub', 'Join', 'Select', 'Split', 'If', 'Equals', 'Not', 'And', 'Or', 'FindInMap', 'ImportValue', 'Base64', 'GetAZs'].flatMap(
    (name) => intrinsic(name, `Fn::${name}`),
  ),
];

const read = (file: string): Template => parse(readFileSync(join(example, file), 'utf8'), { customTags }) as Template;
const template = read('template.yaml');
const resources = template.Resources;

// Pseudo parameters CloudFormation defines in every stack.
const PSEUDO = ['AWS::AccountId', 'AWS::NotificationARNs', 'AWS::NoValue', 'AWS::Partition', 'AWS::Region', 'AWS::StackId', 'AWS::StackName', 'AWS::URLSuffix'];
// The attributes Fn::GetAtt may read, per resource type this template uses (CloudFormation's reference pages).
const ATTRIBUTES: Record<string, string[]> = {
  'AWS::SQS::Queue': ['Arn', 'QueueName', 'QueueUrl'],
  'AWS::DynamoDB::Table': ['Arn', 'StreamArn'],
  'AWS::Serverless::Function': ['Arn'],
  'AWS::Serverless::HttpApi': ['ApiEndpoint'],
};

/** Every intrinsic function call in the template, wherever it sits. */
function calls(node: Node, found: { fn: string; arg: unknown; at: string }[] = [], at = ''): typeof found {
  if (Array.isArray(node)) node.forEach((item, index) => calls(item, found, `${at}[${index}]`));
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'Ref' || key.startsWith('Fn::')) found.push({ fn: key, arg: value, at });
      calls(value, found, `${at}.${key}`);
    }
  }
  return found;
}

const known = (name: string) => name in resources || name in (template.Parameters ?? {}) || PSEUDO.includes(name);
const getAtt = (node: Node): string[] | undefined => (node as { 'Fn::GetAtt'?: string[] } | undefined)?.['Fn::GetAtt'];
const refOf = (node: Node): string | undefined => (node as { Ref?: string } | undefined)?.Ref;

describe('examples/aws/template.yaml, parsed', () => {
  const all = calls(template);

  it('reads the short-form tags as intrinsic functions', () => {
    expect(all.length).toBeGreaterThan(10);
    expect(refOf(resources.Receiver?.Properties?.Environment && (resources.Receiver.Properties.Environment as { Variables: { QUEUE_URL: Node } }).Variables.QUEUE_URL)).toBe('EventsQueue');
  });

  it('every Ref names a resource, a parameter or a pseudo parameter', () => {
    const refs = all.filter((call) => call.fn === 'Ref');
    expect(refs.length).toBeGreaterThan(0);
    for (const { arg, at } of refs) expect(known(String(arg)), `!Ref ${String(arg)} at ${at}`).toBe(true);
  });

  it("every GetAtt names a resource of the template and an attribute its type has", () => {
    const atts = all.filter((call) => call.fn === 'Fn::GetAtt');
    expect(atts.length).toBeGreaterThan(0);
    for (const { arg, at } of atts) {
      const [name = '', attribute = ''] = arg as string[];
      const resource = resources[name];
      expect(resource, `!GetAtt ${name}.${attribute} at ${at}`).toBeDefined();
      expect(ATTRIBUTES[resource!.Type] ?? [], `${resource!.Type} has no attribute ${attribute} (at ${at})`).toContain(attribute);
    }
  });

  it('every ${…} in a Sub names a resource, a parameter or a pseudo parameter', () => {
    const subs = all.filter((call) => call.fn === 'Fn::Sub');
    expect(subs.length).toBeGreaterThan(0);
    for (const { arg, at } of subs) {
      const text = Array.isArray(arg) ? String(arg[0]) : String(arg);
      const local = Array.isArray(arg) ? Object.keys((arg[1] ?? {}) as object) : [];
      for (const [, variable = ''] of text.matchAll(/\$\{([^}!]+)\}/g)) {
        const name = variable.split('.')[0]!;
        expect(known(name) || local.includes(name), `\${${variable}} at ${at}`).toBe(true);
      }
    }
  });

  it('each function handler names an export of a file in its code folder', async () => {
    for (const [name, resource] of Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Serverless::Function')) {
      const handler = String(resource.Properties?.Handler);
      const [file = '', exported = ''] = handler.split('.');
      const codeUri = String(resource.Properties?.CodeUri ?? template.Globals?.Function?.CodeUri ?? './');
      const path = ['.mjs', '.js'].map((ext) => join(example, codeUri, file + ext)).find((candidate) => existsSync(candidate));
      expect(path, `${name}: ${handler}`).toBeDefined();
      expect(readFileSync(path!, 'utf8'), `${name}: export ${exported}`).toMatch(new RegExp(`export (const|async function|function) ${exported}\\b`));
    }
  });
});

describe('what the consumer relies on', () => {
  const consumer = Object.values(resources).find((r) => r.Properties?.Handler === 'consumer.handler')!;
  const sqsEvent = Object.values((consumer.Properties?.Events ?? {}) as Record<string, { Type: string; Properties: Record<string, Node> }>).find(
    (event) => event.Type === 'SQS',
  )!;
  const [queueName = ''] = getAtt(sqsEvent.Properties.Queue) ?? [];
  const queue = resources[queueName]!;

  it('the consumer reads the queue the receiver sends to', () => {
    expect(queue.Type).toBe('AWS::SQS::Queue');
    const receiver = Object.values(resources).find((r) => r.Properties?.Handler === 'receiver.handler')!;
    const variables = (receiver.Properties?.Environment as { Variables: Record<string, Node> }).Variables;
    expect(refOf(variables.QUEUE_URL)).toBe(queueName);
  });

  it("reports batch item failures, so one failed record does not send its batch back", () => {
    expect(sqsEvent.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  });

  // "we recommend setting your queue's visibility timeout to at least six times the timeout that you configure
  // on your function" (AWS Lambda Developer Guide, "Using Lambda with Amazon SQS").
  it("the queue's visibility timeout is at least 6 × the consumer's timeout", () => {
    const timeout = Number(consumer.Properties?.Timeout ?? template.Globals?.Function?.Timeout ?? 3);
    expect(Number(queue.Properties?.VisibilityTimeout)).toBeGreaterThanOrEqual(6 * timeout);
  });

  // "The dead-letter queue of a FIFO queue must also be a FIFO queue" (Amazon SQS Developer Guide,
  // "Using dead-letter queues in Amazon SQS").
  it('a failing message is redriven to a dead-letter queue of the same kind', () => {
    const redrive = queue.Properties?.RedrivePolicy as { deadLetterTargetArn: Node; maxReceiveCount: number };
    const [dlqName = '', attribute] = getAtt(redrive.deadLetterTargetArn) ?? [];
    expect(attribute).toBe('Arn');
    const dlq = resources[dlqName]!;
    expect(dlq.Type).toBe('AWS::SQS::Queue');
    expect(Boolean(dlq.Properties?.FifoQueue)).toBe(Boolean(queue.Properties?.FifoQueue));
    expect(redrive.maxReceiveCount).toBeGreaterThanOrEqual(1);
    expect(dlqName).not.toBe(queueName);
  });

  it('the idempotency table the consumer is given is keyed by id with a TTL on expiresAt', () => {
    const variables = (consumer.Properties?.Environment as { Variables: Record<string, Node> }).Variables;
    const table = resources[refOf(variables.TABLE_NAME) ?? '']!;
    expect(table.Type).toBe('AWS::DynamoDB::Table');
    expect(table.Properties?.KeySchema).toEqual([{ AttributeName: 'id', KeyType: 'HASH' }]);
    expect(table.Properties?.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
  });
});
