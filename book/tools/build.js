#!/usr/bin/env node
'use strict';
// `npm run build`: stage the mdBook source (tools/preprocess.js), then let HonKit render the
// staged copy into book/_book. Exits non-zero if either step fails.

const path = require('node:path');
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');
const { preprocess } = require('./preprocess');

const bookDir = path.resolve(__dirname, '..');
const staging = path.join(bookDir, '.staging');
const output = path.join(bookDir, '_book');

// A failed build must not leave an older book behind for `npm run check` to pass on.
fs.rmSync(output, { recursive: true, force: true });
const { errors, chapters } = preprocess(bookDir, staging);
if (errors.length > 0) {
  for (const e of errors) console.error(`error: ${e}`);
  console.error(`build: ${errors.length} error(s) in the book's source; nothing was built`);
  process.exit(1);
}
console.log(`build: ${chapters.length} chapters staged; rendering with HonKit`);

// HonKit resolves a relative output folder against the book's root, not the current directory,
// so it always gets an absolute path.
const honkit = require.resolve('honkit/bin/honkit.js');
const run = spawnSync(process.execPath, [honkit, 'build', staging, output], { stdio: 'inherit' });
if (run.status !== 0) {
  console.error(`build: HonKit failed (exit ${run.status ?? run.signal})`);
  process.exit(1);
}
console.log(`build: the book is in ${path.relative(process.cwd(), output) || '.'}`);
