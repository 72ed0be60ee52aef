// typedoc plugin: names each module of the reference as users import it (`chat-webhooks/express`), not by
// its folder (`adapters/express`), for every entry of package.json's `exports`.
import { readFileSync } from 'node:fs';
import { Converter, ReflectionKind } from 'typedoc';
import { entryPoints } from '../exports.mjs';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
/** typedoc's default module name (the entry's path without /index.ts) → the import specifier. */
const specifiers = new Map(
  entryPoints(pkg).map(([subpath, esm]) => [
    esm.replace(/^\.\/dist\//, '').replace(/\/index\.js$/, '').replace(/\.js$/, ''),
    subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`,
  ]),
);

export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getReflectionsByKind(ReflectionKind.Module)) {
      const specifier = specifiers.get(module.name);
      if (specifier) module.name = specifier;
    }
  });
}
