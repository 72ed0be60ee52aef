// `npm run pack:aws`: builds and packs this package into the tarball examples/aws/package.json depends on
// (`"chat-webhooks": "file:vendor/chat-webhooks.tgz"`), so that `sam build` installs the library from a clone
// before it is on the registry. The path is read from that package.json, so the two cannot disagree. The
// tarball sits inside the functions' CodeUri (examples/aws/), so SAM's copy of the folder keeps the relative
// path valid; the repository's .gitignore (not one in examples/aws, which SAM would honour) keeps it out of git.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const example = join(root, 'examples', 'aws');
const { dependencies } = JSON.parse(readFileSync(join(example, 'package.json'), 'utf8'));
const spec = dependencies['chat-webhooks'];
if (!spec?.startsWith('file:')) {
  throw new Error(`examples/aws/package.json depends on chat-webhooks by ${spec}, not by a file: path: nothing to pack`);
}
const target = join(example, spec.slice('file:'.length));

execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
// Packed elsewhere first, so that a failed pack leaves the previous tarball in place.
const scratch = mkdtempSync(join(tmpdir(), 'chat-webhooks-pack-'));
try {
  const name = execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', scratch, '--loglevel=error'], { cwd: root, encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop();
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(join(scratch, name), target);
  console.log(`wrote ${relative(root, target)} (${name}); now: cd examples/aws && sam build`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
