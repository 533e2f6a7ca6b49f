'use strict';
// Reads mdBook's book.toml and produces the book.json HonKit expects.

const fs = require('node:fs');
const path = require('node:path');
const { parse } = require('smol-toml');

/**
 * Returns { title, authors, description, language, src, additionalCss, additionalJs } with mdBook's
 * defaults filled in. `additionalCss` and `additionalJs` list paths relative to the book's folder,
 * as in mdBook.
 */
function readBookToml(bookDir) {
  const file = path.join(bookDir, 'book.toml');
  const toml = parse(fs.readFileSync(file, 'utf8'));
  const book = toml.book || {};
  const html = (toml.output && toml.output.html) || {};
  return {
    title: book.title || 'Untitled',
    authors: Array.isArray(book.authors) ? book.authors : [],
    description: book.description || '',
    language: book.language || 'en',
    src: book.src || 'src',
    additionalCss: html['additional-css'] || [],
    additionalJs: html['additional-js'] || [],
  };
}

/**
 * HonKit's book.json. `readme` is the first chapter of SUMMARY.md: mdBook serves it as
 * index.html, and HonKit does the same with the file named as the readme.
 */
function toBookJson(config, readme) {
  return {
    title: config.title,
    author: config.authors.join(', '),
    description: config.description,
    language: config.language,
    structure: { readme, summary: 'SUMMARY.md' },
    // HonKit's defaults (highlight, search, lunr, fontsettings, theme-default) are all we use.
    plugins: [],
    pluginsConfig: {},
  };
}

module.exports = { readBookToml, toBookJson };
