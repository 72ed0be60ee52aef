// Types of tables.mjs, for test/generated.test.ts.
export declare const statusTable: ReadonlyArray<readonly [situation: string, status: string, then: string]>;
interface Events {
  registry: Record<string, { fires: string; envelopeType?: string; beyondSpec?: true }>;
  triggers: readonly string[];
  idempotencyFields: Readonly<Record<string, readonly (readonly string[])[]>>;
}
export declare function triggerTable(events: Pick<Events, 'registry' | 'triggers'>): string;
export declare function statusTableText(): string;
export declare function keysTable(events: Pick<Events, 'idempotencyFields'>): string;
export declare const tableFiles: Readonly<Record<'triggers' | 'status' | 'keys', string>>;
export declare function withTables(text: string, events: Events, file: string): string;
export declare function withDesignTables(design: string): string;
