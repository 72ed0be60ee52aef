// Types of tables.mjs, for test/generated.test.ts.
export declare const statusTable: ReadonlyArray<readonly [situation: string, status: string]>;
interface Events {
  registry: Record<string, { fires: string; envelopeType?: string; beyondSpec?: true }>;
  triggers: readonly string[];
}
export declare function triggerTable(events: Events): string;
export declare function statusTableText(): string;
export declare function withTables(readme: string, events: Events): string;
