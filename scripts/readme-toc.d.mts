// Types of readme-toc.mjs, for test/docs.test.ts.
export declare function anchor(heading: string, seen?: Map<string, number>): string;
export declare function headings(markdown: string): { level: number; text: string }[];
export declare function tocText(markdown: string): string;
export declare function withToc(readme: string): string;
