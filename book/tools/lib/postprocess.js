'use strict';
// What the build adds to HonKit's HTML pages (tools/build.js runs it over _book/ after HonKit),
// so that the book reads like mdBook's, and better:
//
//   figures      an image alone in its paragraph becomes a <figure>; a chart gets its narrow
//                variant (charts/X-narrow.svg) below 600 px through <picture>; the image's
//                Markdown title ("...") becomes the caption; width and height come from the SVG
//   headings     every heading links to itself (the heading text is the link, as in mdBook)
//   callouts     a blockquote that starts with **Note**, **Tip**, **Warning** or **Common bug**
//                (or GitHub's and mdBook's [!NOTE], [!TIP], [!WARNING]) is styled as a callout
//   listings     every code block gets a copy button (theme/workshop.js makes it work)
//   tables       a table of three or more columns gets data-label cells, so that below 600 px
//                each row can be shown as a card instead of overflowing the screen
//   page nav     "Previous: <chapter>" and "Next: <chapter>" links at the end of every chapter
//   scripts      book.toml's additional-js, loaded on every page
//   line breaks  HonKit's <br></br> (two breaks in a browser) becomes <br>
//
// Each rule works on HonKit's regular output with plain string rules; none needs a DOM.

const fs = require('node:fs');
const path = require('node:path');

const CALLOUTS = {
  note: 'Note', tip: 'Tip', warning: 'Warning', 'common bug': 'Common bug', caution: 'Warning', important: 'Note',
};

function escapeAttr(s) {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function stripTags(s) {
  return s.replace(/<[^>]*>/g, '').replace(/\s+/g, ' ').trim();
}

function attr(tag, name) {
  const m = tag.match(new RegExp(`\\s${name}="([^"]*)"`));
  return m ? m[1] : null;
}

// The width and height an SVG file declares, or null.
function svgSize(file) {
  try {
    const head = fs.readFileSync(file, 'utf8').slice(0, 2000);
    const open = head.match(/<svg\b[^>]*>/);
    if (!open) return null;
    const w = parseFloat(attr(open[0], 'width'));
    const h = parseFloat(attr(open[0], 'height'));
    return w > 0 && h > 0 ? { width: Math.round(w), height: Math.round(h) } : null;
  } catch {
    return null;
  }
}

/** Images alone in a paragraph become figures (see the top of this file). */
function figures(html, pageDir) {
  return html.replace(/<p>\s*(<img\b[^>]*>)(?:<\/img>)?\s*<\/p>/g, (whole, img) => {
    const src = attr(img, 'src');
    if (!src || /^[a-z]+:/i.test(src)) return whole;
    const file = path.join(pageDir, decodeURI(src));
    const kind = /(^|\/)charts\//.test(src) ? 'chart' : /(^|\/)diagrams\//.test(src) ? 'diagram' : 'image';
    let tag = img;
    const size = src.endsWith('.svg') ? svgSize(file) : null;
    // Diagrams are drawn at 13 px text; shown a fifth larger they match the prose (a phone scales
    // them down to the column, see workshop.css).
    const zoom = kind === 'diagram' ? 1.2 : 1;
    if (size && !attr(tag, 'width')) {
      tag = tag.replace(/<img\b/, `<img width="${Math.round(size.width * zoom)}" height="${Math.round(size.height * zoom)}"`);
    }
    const title = attr(tag, 'title');
    if (title) tag = tag.replace(/\stitle="[^"]*"/, '');
    let picture = tag;
    const narrow = src.replace(/\.svg$/, '-narrow.svg');
    if (narrow !== src && fs.existsSync(path.join(pageDir, decodeURI(narrow)))) {
      const nsize = svgSize(path.join(pageDir, decodeURI(narrow)));
      const dims = nsize ? ` width="${nsize.width}" height="${nsize.height}"` : '';
      picture = `<picture><source media="(max-width: 600px)" srcset="${narrow}"${dims}>${tag}</picture>`;
    }
    const cap = title ? `<figcaption>${title}</figcaption>` : '';
    return `<figure class="figure figure-${kind}">${picture}${cap}</figure>`;
  });
}

/** Every heading with an id links to itself. */
function headingLinks(html) {
  return html.replace(/<(h[1-6]) id="([^"]+)">([\s\S]*?)<\/\1>/g, (whole, tag, id, inner) => {
    if (/class="heading-link"/.test(inner)) return whole;
    if (/<a\b/.test(inner)) {
      return `<${tag} id="${id}">${inner} <a class="heading-anchor" href="#${id}" aria-label="Link to this section">#</a></${tag}>`;
    }
    return `<${tag} id="${id}"><a class="heading-link" href="#${id}">${inner}</a></${tag}>`;
  });
}

/** Blockquotes that open with a callout word become callouts. */
function callouts(html) {
  return html.replace(/<blockquote>(\s*)<p>(?:<strong>([^<]+?)<\/strong>([.:])?|\[!([A-Za-z]+)\])/g,
    (whole, space, strong, punct, marker) => {
      const word = (strong || marker || '').trim().replace(/[.:]$/, '').toLowerCase();
      const label = CALLOUTS[word];
      if (!label) return whole;
      const kind = label.toLowerCase().replace(/\s+/g, '-');
      return `<blockquote class="callout callout-${kind}">${space}<p><strong class="callout-title">${label}</strong>`;
    });
}

/** Every code block gets a copy button. */
function listings(html) {
  return html.replace(/<pre>([\s\S]*?)<\/pre>/g, (whole) =>
    '<div class="listing"><button class="copy-button" type="button" aria-label="Copy this code to the clipboard" ' +
    `title="Copy to the clipboard">Copy</button>${whole}</div>`);
}

/** Tables of three or more columns get data-label cells (see workshop.css: the cards). */
function tables(html) {
  return html.replace(/<table>([\s\S]*?)<\/table>/g, (whole, body) => {
    const head = body.match(/<thead>([\s\S]*?)<\/thead>/);
    if (!head) return whole;
    const labels = [...head[1].matchAll(/<th\b[^>]*>([\s\S]*?)<\/th>/g)].map((m) => stripTags(m[1]));
    if (labels.length < 3) return whole;
    const rows = body.replace(/<tbody>([\s\S]*?)<\/tbody>/, (tbody, inner) => `<tbody>${inner.replace(/<tr>([\s\S]*?)<\/tr>/g,
      (tr, cells) => {
        let i = 0;
        return `<tr>${cells.replace(/<td\b([^>]*)>/g, (td, rest) => `<td${rest} data-label="${escapeAttr(labels[i++] || '')}">`)}</tr>`;
      })}</tbody>`);
    return `<table class="wide-table">${rows}</table>`;
  });
}

/** Named links to the previous and next chapters, after the chapter's text. */
function pageNav(html) {
  const link = (dir) => {
    const m = html.match(new RegExp(`<a href="([^"]*)" class="navigation navigation-${dir} [^"]*" aria-label="[^:]*: ([^"]*)">`));
    return m ? { href: m[1], title: m[2] } : null;
  };
  const prev = link('prev');
  const next = link('next');
  if (!prev && !next) return html;
  const part = (l, rel, label) => (l ? `<a class="chapter-nav-${rel}" rel="${rel}" href="${l.href}">` +
    `<span class="chapter-nav-dir">${label}</span><span class="chapter-nav-title">${l.title}</span></a>` : '<span></span>');
  const nav = `<nav class="chapter-nav" aria-label="Chapters">${part(prev, 'prev', '← Previous')}${part(next, 'next', 'Next →')}</nav>`;
  return html.replace(/(<section class="normal markdown-section">[\s\S]*?<\/section>)/, `$1\n${nav}`);
}

/** Loads every script of book.toml's additional-js (copied to theme/ in the output). */
function scripts(html, relRoot, jsFiles) {
  if (jsFiles.length === 0) return html;
  const tags = jsFiles.map((f) => `<script src="${relRoot}${f}"></script>`).join('\n');
  return html.replace(/<\/body>/, `${tags}\n</body>`);
}

// Only the chapter's own text: HonKit's page chrome is left alone.
function inSection(html, fn) {
  return html.replace(/(<section class="normal markdown-section">)([\s\S]*?)(<\/section>)/,
    (whole, open, inner, close) => open + fn(inner) + close);
}

// HonKit writes <br> as <br></br>, which a browser reads as two line breaks.
function lineBreaks(html) {
  return html.replace(/<br><\/br>/g, '<br>');
}

/** Applies every rule to one built page. */
function postprocessPage(html, { pageDir, relRoot, jsFiles }) {
  let out = inSection(html, (inner) => listings(tables(callouts(headingLinks(figures(lineBreaks(inner), pageDir))))));
  out = pageNav(out);
  return scripts(out, relRoot, jsFiles);
}

/** Post-processes every HTML page of the built book; copies the scripts. Returns the pages done. */
function postprocessBook(builtDir, bookDir, jsFiles) {
  const copied = [];
  for (const file of jsFiles) {
    const target = path.join(builtDir, file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(path.join(bookDir, file), target);
    copied.push(file.split(path.sep).join('/'));
  }
  const pages = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'gitbook') walk(full);
      } else if (entry.name.endsWith('.html')) {
        const rel = path.relative(builtDir, full);
        const depth = rel.split(path.sep).length - 1;
        const html = fs.readFileSync(full, 'utf8');
        fs.writeFileSync(full, postprocessPage(html, { pageDir: dir, relRoot: '../'.repeat(depth), jsFiles: copied }));
        pages.push(rel);
      }
    }
  };
  walk(builtDir);
  return pages;
}

module.exports = { postprocessBook, postprocessPage, figures, headingLinks, callouts, listings, tables, pageNav };
