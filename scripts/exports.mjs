// The package's entry points, in one place: every subpath of package.json's `exports` is written out in full
// from the ES module it names, so that adding a subpath is one line. Add
//     "./api": "./dist/src/api/index.js"
// to `exports` and run `npm run generate`: the entry gets its `import` and `require` branches, each with its
// own declarations (CommonJS consumers need CommonJS-flavoured .d.ts, or TypeScript reports TS1479), and
// `typesVersions` gains the path that TypeScript's old `node10` resolution needs. `npm run build` emits
// dist/ (ES modules) and dist/cjs/ (the same tree as CommonJS) for every file, so each entry exists in both.

/** Where the CommonJS twin of an ES module in dist/ lives. */
export const cjsPath = (esmPath) => esmPath.replace(/^\.\/dist\//, './dist/cjs/');
const typesPath = (jsPath) => jsPath.replace(/\.js$/, '.d.ts');

/** The ES module an entry names, whichever shape it was written in. */
function esmTarget(subpath, target) {
  const path = typeof target === 'string' ? target : (target.import?.default ?? target.default);
  if (typeof path !== 'string' || !/^\.\/dist\/(?!cjs\/).+\.js$/.test(path)) {
    throw new Error(`package.json exports["${subpath}"]: name the ES module as "./dist/<folder>/<file>.js", got ${JSON.stringify(target)}`);
  }
  return path;
}

/** `[subpath, ES module path]` for every code entry (not ./package.json or other plain files). */
export function entryPoints(pkg) {
  return Object.entries(pkg.exports)
    .filter(([subpath]) => subpath !== './package.json')
    .map(([subpath, target]) => [subpath, esmTarget(subpath, target)]);
}

/** package.json with `exports`, `main`, `types` and `typesVersions` written out from its entry points. */
export function withEntryPoints(pkg) {
  const entries = entryPoints(pkg);
  const exportsMap = {};
  for (const [subpath, esm] of entries) {
    exportsMap[subpath] = {
      import: { types: typesPath(esm), default: esm },
      require: { types: typesPath(cjsPath(esm)), default: cjsPath(esm) },
    };
  }
  exportsMap['./package.json'] = './package.json';
  const root = entries.find(([subpath]) => subpath === '.');
  if (!root) throw new Error('package.json exports needs a "." entry');
  const typesVersions = {
    '*': Object.fromEntries(
      entries.filter(([subpath]) => subpath !== '.').map(([subpath, esm]) => [subpath.slice(2), [typesPath(cjsPath(esm))]]),
    ),
  };
  // Rebuilt in a fixed order so that the check in CI compares like with like.
  const result = {};
  for (const [key, value] of Object.entries(pkg)) {
    if (key === 'main' || key === 'types' || key === 'typesVersions') continue;
    if (key === 'exports') {
      result.main = cjsPath(root[1]);
      result.types = typesPath(cjsPath(root[1]));
      result.exports = exportsMap;
      result.typesVersions = typesVersions;
      continue;
    }
    result[key] = value;
  }
  return result;
}
