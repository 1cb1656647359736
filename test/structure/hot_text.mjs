// The daemon's hot functions (src/hot_functions.txt) sit together at the
// start of its text (Makefile, HOT_LIST; docs/performance.md, issue 34
// item 14): the span from the first to the last of them in build/mcpgw is
// at most a little more than their own size, not the whole text. Reads the
// built daemon (`make all` first); without one it says so and passes.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const bin = process.env.MCPGW_BIN_OPT || join(root, 'build/mcpgw');
if (!existsSync(bin)) {
  console.log(`hot_text: no ${bin} (make all): not checked`);
  process.exit(0);
}
const hot = new Set(readFileSync(join(root, 'src/hot_functions.txt'), 'utf8').split('\n')
  .filter((l) => /^[A-Za-z_][A-Za-z0-9_.]*$/.test(l)));
let lo = Infinity, hi = 0, size = 0, text = 0;
const found = new Set();
for (const line of execFileSync('nm', ['-S', '--defined-only', bin], { encoding: 'utf8', maxBuffer: 1 << 26 }).split('\n')) {
  const [addr, len, type, name] = line.split(' ');
  if (!name || !/^[tT]$/.test(type)) continue;
  const a = parseInt(addr, 16), n = parseInt(len, 16);
  text += n;
  if (!hot.has(name)) continue;
  found.add(name);
  lo = Math.min(lo, a);
  hi = Math.max(hi, a + n);
  size += n;
}
const span = hi - lo;
const kib = (x) => `${(x / 1024).toFixed(0)} KiB`;
console.log(`hot_text: ${found.size} of ${hot.size} listed functions in ${bin}, ${kib(size)} of ${kib(text)} of text, spanning ${kib(span)}`);
// Alignment padding between functions, and the few unlisted functions that
// share a listed one's name (statics of two files), come on top of their sizes.
if (found.size < hot.size * 0.9 || span > size * 1.15 + 8192) {
  console.error('hot_text: the listed functions are not together at the start of the text ' +
    '(objects without -ffunction-sections, or the link without build/gen/hot.ld?)');
  process.exit(1);
}
