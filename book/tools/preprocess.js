#!/usr/bin/env node
'use strict';
// Turns the mdBook source (book.toml + src/) into a folder HonKit can build (.staging/):
//   1. copies src/ to .staging/
//   2. expands {{#include ...}} in every Markdown file (paths relative to the source file)
//   3. renders the Markdown inside <details> blocks, as CommonMark (and so mdBook) does
//   4. shields each page from HonKit's Nunjucks templating, so `{{` and `{%` mean nothing there
//   5. rewrites SUMMARY.md into HonKit's dialect and writes book.json from book.toml
//   6. gathers book.toml's additional-css into styles/website.css, which HonKit's theme loads
// Any missing file, anchor or chapter stops the build with a message that names it.
//
// Usage: node tools/preprocess.js [--out DIR]    (DIR defaults to book/.staging)

const fs = require('node:fs');
const path = require('node:path');
const { expandIncludes, IncludeError } = require('./lib/include');
const { parseSummary, toHonkitSummary } = require('./lib/summary');
const { readBookToml, toBookJson } = require('./lib/config');
const { renderDetails } = require('./lib/details');
const { AnswerCheck } = require('./lib/answers');

const RAW_START = '{% raw %}';
const RAW_END = '{% endraw %}';

function markdownFiles(dir) {
  const found = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...markdownFiles(full));
    else if (entry.name.endsWith('.md')) found.push(full);
  }
  return found;
}

function shieldFromTemplating(text, displayName) {
  if (text.includes(RAW_END)) {
    throw new IncludeError(`${displayName}: contains "${RAW_END}", which HonKit's templating cannot shield`);
  }
  return `${RAW_START}\n\n${text}\n\n${RAW_END}\n`;
}

function preprocess(bookDir, outDir) {
  const config = readBookToml(bookDir);
  const srcDir = path.join(bookDir, config.src);
  const errors = [];

  fs.rmSync(outDir, { recursive: true, force: true });
  fs.cpSync(srcDir, outDir, { recursive: true });

  const summaryFile = path.join(srcDir, 'SUMMARY.md');
  const summaryText = fs.readFileSync(summaryFile, 'utf8');
  const chapters = parseSummary(summaryText).filter((c) => !c.draft);
  for (const chapter of chapters) {
    if (!fs.existsSync(path.join(srcDir, chapter.path))) {
      errors.push(`${path.relative(bookDir, summaryFile)}: chapter '${chapter.title}' points to missing file ${chapter.path}`);
    }
  }
  if (chapters.length === 0) errors.push(`${path.relative(bookDir, summaryFile)}: lists no chapter`);
  const answers = new AnswerCheck(bookDir, summaryText); // no reference code outside the Solutions part
  errors.push(...answers.problems);

  for (const source of markdownFiles(srcDir)) {
    const relative = path.relative(srcDir, source);
    if (relative === 'SUMMARY.md') continue;
    const displayName = path.relative(bookDir, source);
    const shown = answers.checkPage(source, relative, displayName);
    errors.push(...shown.errors);
    for (const w of shown.warnings) console.warn(`warning: ${w}`);
    try {
      const expanded = expandIncludes(fs.readFileSync(source, 'utf8'), source, displayName);
      const page = shieldFromTemplating(renderDetails(expanded), displayName);
      fs.writeFileSync(path.join(outDir, relative), page);
    } catch (err) {
      if (!(err instanceof IncludeError)) throw err;
      errors.push(err.message);
    }
  }

  const css = [];
  for (const file of config.additionalCss) {
    const full = path.resolve(bookDir, file);
    if (fs.existsSync(full)) css.push(`/* ${file} */\n${fs.readFileSync(full, 'utf8')}`);
    else errors.push(`book.toml: additional-css names missing file ${file}`);
  }
  if (css.length > 0) {
    fs.mkdirSync(path.join(outDir, 'styles'), { recursive: true });
    fs.writeFileSync(path.join(outDir, 'styles', 'website.css'), css.join('\n'));
  }

  fs.writeFileSync(path.join(outDir, 'SUMMARY.md'), toHonkitSummary(summaryText));
  const readme = chapters.length > 0 ? chapters[0].path : 'README.md';
  fs.writeFileSync(path.join(outDir, 'book.json'), JSON.stringify(toBookJson(config, readme), null, 2) + '\n');
  return { errors, chapters };
}

function main() {
  const bookDir = path.resolve(__dirname, '..');
  const outFlag = process.argv.indexOf('--out');
  const outDir = outFlag > 0 ? path.resolve(process.argv[outFlag + 1]) : path.join(bookDir, '.staging');
  const { errors, chapters } = preprocess(bookDir, outDir);
  if (errors.length > 0) {
    for (const e of errors) console.error(`error: ${e}`);
    console.error(`preprocess: ${errors.length} error(s); the book was not built`);
    process.exit(1);
  }
  console.log(`preprocess: ${chapters.length} chapters staged in ${path.relative(process.cwd(), outDir) || '.'}`);
}

if (require.main === module) main();

module.exports = { preprocess };
