/**
 * Sends the messages put during one turn of the event loop together: SendMessageBatch takes up to 10 messages,
 * and in all no more than one message may be (256 KiB by default). Each put resolves or rejects by its own
 * entry's fate in the answer.
 */
import type { SendMessageBatchRequestEntry, SQSClient } from '@aws-sdk/client-sqs';
import { loadSqs } from './sdk.js';

const MAX_ENTRIES = 10;

interface Pending {
  message: SendMessageBatchRequestEntry;
  bytes: number;
  resolve: () => void;
  reject: (cause: unknown) => void;
}

export class SendBatches {
  #pending: Pending[] = [];
  readonly #queueUrl: string;
  readonly #client: Promise<SQSClient>;
  readonly #maxBatchBytes: number;

  constructor(queueUrl: string, client: Promise<SQSClient>, maxBatchBytes: number) {
    this.#queueUrl = queueUrl;
    this.#client = client;
    this.#maxBatchBytes = maxBatchBytes;
  }

  send(message: SendMessageBatchRequestEntry, bytes: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.#pending.length === 0) setImmediate(() => this.#flush());
      this.#pending.push({ message, bytes, resolve, reject });
    });
  }

  #flush(): void {
    const pending = this.#pending;
    this.#pending = [];
    let batch: Pending[] = [];
    let bytes = 0;
    for (const item of pending) {
      // No message overflows an empty batch alone: sqsQueue refuses one above maxMessageBytes (≤ maxBatchBytes).
      if (batch.length === MAX_ENTRIES || bytes + item.bytes > this.#maxBatchBytes) {
        void this.#sendBatch(batch);
        batch = [];
        bytes = 0;
      }
      batch.push(item);
      bytes += item.bytes;
    }
    // Never empty: a flush is scheduled by the put that found nothing pending.
    void this.#sendBatch(batch);
  }

  async #sendBatch(batch: Pending[]): Promise<void> {
    let answer: { Successful?: Array<{ Id?: string }>; Failed?: Array<{ Id?: string; Code?: string; Message?: string }> };
    try {
      const [{ SendMessageBatchCommand }, client] = await Promise.all([loadSqs(), this.#client]);
      const Entries = batch.map((item) => item.message);
      answer = await client.send(new SendMessageBatchCommand({ QueueUrl: this.#queueUrl, Entries }));
    } catch (cause) {
      for (const item of batch) item.reject(cause);
      return;
    }
    // A list left out of the answer is empty (`new Set(undefined)`).
    const sent = new Set(answer.Successful?.map((entry) => entry.Id));
    const failed = new Map(answer.Failed?.map((entry) => [entry.Id, entry]));
    for (const item of batch) {
      const id = item.message.Id;
      const failure = failed.get(id);
      if (sent.has(id) && !failure) item.resolve();
      else item.reject(new Error(`SQS did not take the message: ${failure ? `${failure.Code}: ${failure.Message}` : 'it is missing from the answer.'}`));
    }
  }
}
