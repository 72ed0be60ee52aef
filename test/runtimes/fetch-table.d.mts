// Types of fetch-table.mjs, for fetch-table.test.ts.
export declare const rows: ReadonlyArray<readonly [name: string, row: () => Promise<void>]>;
export declare function runFetchTable(print: (line: string) => void): Promise<{ passed: number; failed: number }>;
