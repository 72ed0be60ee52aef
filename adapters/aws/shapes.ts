/**
 * Lambda's SQS event and partial batch answer, as AWS documents them (only what the adapter and its users need
 * typed; compatible with `SQSEvent` and `SQSBatchResponse` of @types/aws-lambda).
 */
export interface SqsMessageAttribute {
  dataType: string;
  stringValue?: string;
  binaryValue?: string;
  stringListValues?: string[];
  binaryListValues?: string[];
}

export interface SqsRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: {
    /** How many times the message was received, this time included: "1" the first time. */
    ApproximateReceiveCount: string;
    /** Milliseconds since the epoch, as text. */
    SentTimestamp: string;
    SenderId: string;
    ApproximateFirstReceiveTimestamp: string;
    /** FIFO queues only. */
    SequenceNumber?: string;
    MessageGroupId?: string;
    MessageDeduplicationId?: string;
    AWSTraceHeader?: string;
  };
  messageAttributes: Record<string, SqsMessageAttribute>;
  md5OfBody: string;
  md5OfMessageAttributes?: string | null;
  eventSource: string;
  eventSourceARN: string;
  awsRegion: string;
}

export interface SqsEvent {
  Records: SqsRecord[];
}

/** With `ReportBatchItemFailures` on the event source mapping: the records to deliver again. */
export interface SqsBatchResponse {
  batchItemFailures: Array<{ itemIdentifier: string }>;
}

/** The part of the Lambda context object the handlers read (any Lambda `Context` is one). */
export interface LambdaContext {
  getRemainingTimeInMillis?(): number;
}
