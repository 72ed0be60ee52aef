/** Group commit (src/stores/kit/write-batch.ts): one transaction per turn, synced when any of its writes must be. */
import { describe, expect, it } from 'vitest';
import { WriteBatch } from '../../src/stores/kit/write-batch.js';

function recordingBatch() {
  const transactions: { writes: number; mustSync: boolean }[] = [];
  let writes = 0;
  const batch = new WriteBatch((body, mustSync) => {
    writes = 0;
    body();
    transactions.push({ writes, mustSync });
  });
  const write = (value: string) => () => {
    writes += 1;
    return value;
  };
  return { batch, transactions, write };
}

describe('WriteBatch', () => {
  it('commits the writes of one turn in one transaction, synced if any write must be', async () => {
    const { batch, transactions, write } = recordingBatch();
    const results = await Promise.all([batch.add(write('claim'), false), batch.add(write('put')), batch.add(write('done'), false)]);
    expect(results).toEqual(['claim', 'put', 'done']);
    expect(transactions).toEqual([{ writes: 3, mustSync: true }]);
  });

  it('a turn of writes that may be lost to a power cut commits without a sync', async () => {
    const { batch, transactions, write } = recordingBatch();
    await Promise.all([batch.add(write('claim'), false), batch.add(write('complete'), false)]);
    await batch.add(write('put'));
    expect(transactions).toEqual([
      { writes: 2, mustSync: false },
      { writes: 1, mustSync: true },
    ]);
  });

  it('one write that throws fails alone; a failed transaction fails every write of it', async () => {
    const { batch, write } = recordingBatch();
    const broken = () => {
      throw new Error('constraint');
    };
    const settled = await Promise.allSettled([batch.add(write('a')), batch.add(broken)]);
    expect(settled).toEqual([
      { status: 'fulfilled', value: 'a' },
      { status: 'rejected', reason: new Error('constraint') },
    ]);

    const failing = new WriteBatch(() => {
      throw new Error('disk full');
    });
    const both = await Promise.allSettled([failing.add(() => 1), failing.add(() => 2, false)]);
    expect(both.map((s) => (s.status === 'rejected' ? (s.reason as Error).message : s.value))).toEqual(['disk full', 'disk full']);
  });

  it('answers after the promise a transaction returns (its sync), and fails every write if that rejects', async () => {
    let sync!: { resolve: () => void; reject: (error: Error) => void };
    const batch = new WriteBatch((body) => {
      body();
      return new Promise<void>((resolve, reject) => (sync = { resolve, reject }));
    });
    let answered = false;
    const put = batch.add(() => 'stored').then((value) => ((answered = true), value));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(answered).toBe(false);
    sync.resolve();
    expect(await put).toBe('stored');

    const next = Promise.allSettled([batch.add(() => 1), batch.add(() => 2)]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    sync.reject(new Error('fsync failed'));
    expect((await next).map((s) => (s.status === 'rejected' ? (s.reason as Error).message : s.value))).toEqual(['fsync failed', 'fsync failed']);
  });

  it('commits nothing when nothing is queued, and a turn flushed early is not committed twice', async () => {
    const { batch, transactions, write } = recordingBatch();
    batch.flush();
    expect(transactions).toEqual([]);
    const put = batch.add(write('put'));
    batch.flush(); // as a store's close() does
    expect(await put).toBe('put');
    await new Promise((resolve) => setImmediate(resolve));
    expect(transactions).toEqual([{ writes: 1, mustSync: true }]);
  });

  it('a transaction that commits without running the writes fails each of them', async () => {
    const batch = new WriteBatch(() => undefined);
    const settled = await Promise.allSettled([batch.add(() => 1), batch.add(() => 2)]);
    expect(settled).toEqual([
      { status: 'rejected', reason: undefined },
      { status: 'rejected', reason: undefined },
    ]);
  });
});
