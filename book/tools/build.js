#!/usr/bin/env node
'use strict';
// `npm run build`: check that every chart and diagram is up to date with its source
// (lib/figures.js), stage the mdBook source (tools/preprocess.js), let HonKit render the staged
// copy into book/_book, then finish the pages (lib/postprocess.js: figures, heading links,
// callouts, copy buttons, chapter links, additional-js) and write the search index, one entry
// per section (lib/search.js). Exits non-zero if any step fails.

const path = require('node:path');
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');
const { preprocess } = require('./preprocess');
const { postprocessBook } = require('./lib/postprocess');
const { writeSearchIndex } = require('./lib/search');
const expected = require('./lib/expected');
const { readBookToml } = require('./lib/config');
const { staleFigures } = require('./lib/figures');

const bookDir = path.resolve(__dirname, '..');
const staging = path.join(bookDir, '.staging');
const output = path.join(bookDir, '_book');

// A failed build must not leave an older book behind for `npm run check` to pass on.
fs.rmSync(output, { recursive: true, force: true });
const config = readBookToml(bookDir);
const { errors, chapters } = preprocess(bookDir, staging);
errors.push(...staleFigures(bookDir, path.join(bookDir, config.src)));
for (const file of config.additionalJs) {
  if (!fs.existsSync(path.resolve(bookDir, file))) errors.push(`book.toml: additional-js names missing file ${file}`);
}
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
const pages = postprocessBook(output, bookDir, config.additionalJs);
const entries = writeSearchIndex(output, expected.chapters(bookDir).filter((c) => c.page));
console.log(`build: ${pages.length} pages finished, ${entries} sections in the search index`);
console.log(`build: the book is in ${path.relative(process.cwd(), output) || '.'}`);
