'use strict';
// What the book's source promises, computed without a browser, for tools/check.js to compare
// with what the browser shows: the chapters and their URLs, the first line of every included
// snippet, and whether highlight.js would colour a given code block at all.

const fs = require('node:fs');
const path = require('node:path');
const { parseSummary } = require('./summary');
const { readBookToml } = require('./config');
const { expandIncludes } = require('./include');

const INCLUDE = /\{\{\s*#include\s+[^}]+\}\}/g;

/** The output page of a chapter: its .md becomes .html, and the first chapter is index.html. */
function pageUrlPath(chapterPath, isFirst) {
  if (isFirst) return 'index.html';
  return chapterPath.replace(/(^|\/)README\.md$/i, '$1index.html').replace(/\.md$/, '.html');
}

/** Chapters of SUMMARY.md, in order, with `page` (URL path of the rendered page). */
function chapters(bookDir) {
  const { src } = readBookToml(bookDir);
  const srcDir = path.join(bookDir, src);
  const list = parseSummary(fs.readFileSync(path.join(srcDir, 'SUMMARY.md'), 'utf8'));
  let first = true;
  return list.map((c) => {
    if (c.draft) return { ...c, page: null, source: null };
    const page = pageUrlPath(c.path, first);
    first = false;
    return { ...c, page, source: path.join(srcDir, c.path) };
  });
}

// The text a reader sees for one line of Markdown: no tags, no inline markup, no list marker.
function visibleText(line) {
  return line
    .replace(/<[^>]*>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/^\s*(#{1,6}\s|>\s?|[-*+]\s|\d+\.\s)/, '')
    .replace(/`|\*\*/g, '')
    .trim();
}

/**
 * For every {{#include}} in a chapter: { directive, inCode, firstLine }, where firstLine is the
 * first thing of the included text a reader should find on the page: its first non-empty line
 * when the include sits in a code block, else the first line of Markdown with visible text.
 */
function includesOf(sourceFile) {
  const text = fs.readFileSync(sourceFile, 'utf8');
  const found = [];
  for (const match of text.matchAll(INCLUDE)) {
    const inCode = insideFence(text.slice(0, match.index));
    const expanded = expandIncludes(match[0], sourceFile, path.basename(sourceFile));
    const lines = expanded.split('\n').map((l) => (inCode ? l.trim() : visibleText(l)));
    found.push({ directive: match[0], inCode, firstLine: lines.find((l) => l !== '') || null });
  }
  return found;
}

// True when the text before a position leaves a fenced code block open.
function insideFence(before) {
  let fence = null;
  for (const line of before.split('\n').slice(0, -1)) {
    const f = line.match(/^\s{0,3}(`{3,}|~{3,})/);
    if (!f) continue;
    if (!fence) fence = f[1];
    else if (f[1][0] === fence[0] && f[1].length >= fence.length) fence = null;
  }
  return fence !== null;
}

// highlight.js, as HonKit's default highlight plugin loads it.
function loadHighlightJs() {
  const plugin = path.dirname(require.resolve('@honkit/honkit-plugin-highlight/package.json'));
  return require(require.resolve('highlight.js', { paths: [plugin] }));
}

/**
 * Would HonKit's highlighter colour this code? Returns { known, spans }: `known` is false when
 * highlight.js has no such language; `spans` counts the coloured spans it would produce.
 */
function highlightExpectation(hljs, language, code) {
  const aliases = { py: 'python', js: 'javascript', json: 'javascript', rb: 'ruby', csharp: 'cs' };
  const lang = aliases[language] || language;
  if (!hljs.getLanguage(lang)) return { known: false, spans: 0 };
  const html = hljs.highlight(code, { language: lang }).value;
  return { known: true, spans: (html.match(/<span class="hljs-/g) || []).length };
}

function normalizeSpace(text) {
  return text.replace(/\s+/g, ' ').trim();
}

module.exports = {
  chapters, includesOf, visibleText, loadHighlightJs, highlightExpectation, normalizeSpace, pageUrlPath,
};
