// The workerd entry: `workerd test` calls test() once; it runs the status table and fails if a row failed.
import { runFetchTable } from './fetch-table.mjs';

export default {
  async test() {
    const { failed } = await runFetchTable((line) => console.log(line));
    if (failed > 0) throw new Error(`${failed} status-table row(s) failed under workerd`);
  },
};
