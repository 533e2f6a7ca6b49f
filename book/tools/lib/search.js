'use strict';
// The book's search index, one entry per section instead of HonKit's one per page, so that a
// search lands on the section that matches, and with code identifiers split the way a reader
// types them: `std::memory_order_acquire);` is found by `memory_order_acquire` and by
// `std::memory_order_acquire`. It replaces HonKit's search_index.json and is read by HonKit's
// own search box (gitbook-plugin-lunr), with the same lunr version it ships.

const fs = require('node:fs');
const path = require('node:path');

function loadLunr() {
  const plugin = path.dirname(require.resolve('gitbook-plugin-lunr/package.json'));
  return require(require.resolve('lunr', { paths: [plugin] }));
}

const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': '\'', apos: '\'', nbsp: ' ' };

function decode(text) {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, e) => {
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1)));
    return ENTITIES[e.toLowerCase()] ?? whole;
  });
}

function textOf(html) {
  return decode(html.replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, ' ').replace(/<button\b[\s\S]*?<\/button>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')).replace(/\s+/g, ' ').trim();
}

function escapeHtml(s) {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * How the book's search splits text into words, at indexing time here and for the reader's query
 * in theme/workshop.js (the same rule, written twice): words are split at spaces and punctuation,
 * and a compound word is kept whole *and* in parts, so `work-stealing` and `std::atomic` are found
 * as phrases (lunr looks for documents holding every word of a query) and by their parts
 * (`memory_order_acquire` in `std::memory_order_acquire);`).
 */
function tokenize(text) {
  const out = [];
  for (const raw of String(text).toLowerCase().split(/[^a-z0-9_+#:.\-]+/)) {
    const word = raw.replace(/^[-:.]+|[-:.]+$/g, '');
    if (!word) continue;
    out.push(word);
    if (/::|[.-]/.test(word)) out.push(...word.split(/::|[.-]+/).filter(Boolean));
  }
  return out;
}

/** [{ id, title, html }] for a chapter's content: the text before the first h2 and each h2/h3 section. */
function sections(contentHtml) {
  const parts = [];
  const re = /<(h[1-3]) id="([^"]+)">([\s\S]*?)<\/\1>/g;
  let last = { id: null, title: null, start: 0 };
  let m;
  while ((m = re.exec(contentHtml)) !== null) {
    if (m[1] === 'h1') {
      last = { id: null, title: null, start: re.lastIndex };
      continue;
    }
    parts.push({ ...last, html: contentHtml.slice(last.start, m.index) });
    last = { id: m[2], title: textOf(m[3]), start: re.lastIndex };
  }
  parts.push({ ...last, html: contentHtml.slice(last.start) });
  return parts.filter((p) => textOf(p.html) || p.title);
}

/** Writes builtDir/search_index.json for the chapters [{ page, title }] (page: URL path of the HTML). */
function writeSearchIndex(builtDir, chapters) {
  const lunr = loadLunr();
  const store = {};
  const lunrTokenizer = lunr.tokenizer;
  lunr.tokenizer = (obj) => (Array.isArray(obj) ? obj.map((t) => String(t).toLowerCase()) : tokenize(obj ?? ''));
  const index = lunr(function () {
    this.ref('url');
    this.field('title', { boost: 10 }); // the section's heading (the chapter's title for its opening)
    this.field('chapter', { boost: 2 }); // the chapter's title: a section is found by its chapter too
    this.field('body');
    // As HonKit's plugin does: keep "C++" and the like whole.
    this.pipeline.remove(lunr.trimmer);
  });
  let entries = 0;
  for (const chapter of chapters) {
    const file = path.join(builtDir, chapter.page);
    if (!fs.existsSync(file)) continue;
    const html = fs.readFileSync(file, 'utf8');
    const content = html.match(/<section class="normal markdown-section">([\s\S]*?)<\/section>/);
    if (!content) continue;
    for (const s of sections(content[1])) {
      const text = textOf(s.html);
      const ref = s.id ? `${chapter.page}#${s.id}` : chapter.page;
      const title = s.title ? `${chapter.title} › ${s.title}` : chapter.title;
      store[ref] = { title, url: ref, body: escapeHtml(text.length > 280 ? `${text.slice(0, 277)}...` : text) };
      index.add({ url: ref, title: s.title || chapter.title, chapter: chapter.title, body: text });
      entries++;
    }
  }
  lunr.tokenizer = lunrTokenizer;
  fs.writeFileSync(path.join(builtDir, 'search_index.json'), JSON.stringify({ index, store }));
  return entries;
}

module.exports = { writeSearchIndex, tokenize, sections, textOf };
