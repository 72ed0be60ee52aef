// Stands in for a package of tools/ that is not installed (tsconfig.json "paths" falls back to it), so that a
// bare `tsc` in a clone that ran `npm install` only does not stop at the import. Everything from it is `any`:
// annotate callbacks' parameters. `npm run typecheck` and CI install the tools first and check the real types.
declare const anything: any;
export = anything;
