// `node --import ./load-log.mjs …`: appends the URL of every ES module resolved to the file LOAD_LOG names, so
// a test can tell what a fresh process loaded (test/cold/cli-lazy.test.ts).
import { register } from 'node:module';

const hooks = `
  import { appendFileSync } from 'node:fs';
  export async function resolve(specifier, context, next) {
    const result = await next(specifier, context);
    appendFileSync(${JSON.stringify(process.env.LOAD_LOG)}, result.url + '\\n');
    return result;
  }`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
