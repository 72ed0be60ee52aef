// Runs the fetch adapter's status table as a program: `node|bun|deno run ... test/runtimes/run.mjs`.
// Prints where #platform resolved under this runtime's conditions (this file is inside the package, so it
// resolves the package's imports as the package does). Exits non-zero when a row fails (an uncaught error at
// top level does so in every runtime).
import { runFetchTable } from './fetch-table.mjs';

console.log(`# #platform: ${import.meta.resolve('#platform')}`);
const { failed } = await runFetchTable((line) => console.log(line));
if (failed > 0) throw new Error(`${failed} status-table row(s) failed under this runtime`);
