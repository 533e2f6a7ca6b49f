'use strict';
// What tools/check.js measures on a rendered page beyond its text: the layout at a given width
// (nothing sticks out of the column; only code may scroll, and on wide screens not even code),
// the figures (loaded, alt text, readable size), headings that link to themselves, copy
// buttons, callouts and the links to the previous and next chapters. The functions named
// *InPage run inside the browser (page.evaluate); the others judge what they return.

const fs = require('node:fs');
const path = require('node:path');

/** In the browser: everything that is wider than the column, or scrolls sideways. */
function layoutInPage(codeMayScroll) {
  const section = document.querySelector('.markdown-section');
  if (!section) return { problems: ['no .markdown-section on the page'], column: 0 };
  const col = section.getBoundingClientRect();
  const name = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += `#${el.id}`;
    else if (el.classList.length) s += `.${[...el.classList].join('.')}`;
    const text = (el.textContent || el.getAttribute('alt') || el.getAttribute('src') || '').replace(/\s+/g, ' ').trim();
    return `${s} "${text.length > 50 ? `${text.slice(0, 47)}...` : text}"`;
  };
  const problems = [];
  const reported = new Set();
  for (const el of section.querySelectorAll('pre, table, figure, .listing, blockquote, details')) {
    if (el.scrollWidth <= el.clientWidth + 1) continue;
    if (el.tagName === 'PRE' && codeMayScroll) continue;
    problems.push(`${name(el)} scrolls sideways (${el.scrollWidth} px of content in ${el.clientWidth} px)`);
    reported.add(el);
  }
  for (const el of section.querySelectorAll('*')) {
    if (el.closest('pre')) continue;
    let parent = el.parentElement;
    let inside = false;
    while (parent && parent !== section) {
      if (reported.has(parent)) inside = true;
      parent = parent.parentElement;
    }
    if (inside) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const over = Math.round(Math.max(r.right - col.right, col.left - r.left));
    if (over > 1) {
      problems.push(`${name(el)} sticks out of the column by ${over} px`);
      reported.add(el);
    }
  }
  const page = document.scrollingElement;
  if (page.scrollWidth > page.clientWidth + 1) problems.push(`the page scrolls sideways (${page.scrollWidth} px in ${page.clientWidth})`);
  for (const sel of ['.book-body', '.body-inner', '.page-wrapper', '.page-inner']) {
    const el = document.querySelector(sel);
    if (el && el.scrollWidth > el.clientWidth + 1) problems.push(`${sel} scrolls sideways (${el.scrollWidth} px in ${el.clientWidth})`);
  }
  return { problems, column: Math.round(col.width) };
}

/** In the browser: the page's images, headings, listings, callouts and chapter links. */
function featuresInPage() {
  const section = document.querySelector('.markdown-section');
  const images = [...section.querySelectorAll('img')].map((img) => ({
    src: img.getAttribute('src'),
    current: img.currentSrc,
    alt: img.getAttribute('alt') || '',
    loaded: img.complete && img.naturalWidth > 0,
    natural: img.naturalWidth,
    shown: img.clientWidth,
    figure: Boolean(img.closest('figure')),
  }));
  const headings = [...section.querySelectorAll('h1[id], h2[id], h3[id], h4[id]')].map((h) => ({
    id: h.id,
    linked: Boolean(h.querySelector(`a[href="#${CSS.escape(h.id)}"]`)),
  }));
  const words = /^(note|tip|warning|common bug)[.:]?$/i;
  const quotes = [...section.querySelectorAll('blockquote')];
  return {
    images,
    headings,
    listings: section.querySelectorAll('pre').length,
    buttons: section.querySelectorAll('.listing > .copy-button').length,
    callouts: quotes.filter((q) => q.classList.contains('callout')).length,
    unstyled: quotes.filter((q) => {
      const first = q.querySelector(':scope > p:first-child > strong:first-child');
      return !q.classList.contains('callout') && first && words.test(first.textContent.trim());
    }).length,
    prev: (document.querySelector('.chapter-nav a[rel=prev] .chapter-nav-title') || {}).textContent || null,
    next: (document.querySelector('.chapter-nav a[rel=next] .chapter-nav-title') || {}).textContent || null,
  };
}

// Smallest font size an SVG file uses, in its own pixels (null when it sets none).
function smallestFont(file) {
  try {
    const svg = fs.readFileSync(file, 'utf8');
    const sizes = [...svg.matchAll(/font-size(?:=|:)\s*"?([\d.]+)(?:px|pt)?/g)].map((m) => Number(m[1]));
    return sizes.length ? Math.min(...sizes) : null;
  } catch {
    return null;
  }
}

// What a generated SVG (chart or diagram) must say to a screen reader.
function svgAccessibility(file) {
  try {
    const svg = fs.readFileSync(file, 'utf8');
    const title = (svg.match(/<svg\b[^>]*>\s*(?:<metadata[^>]*>[^<]*<\/metadata>)?\s*<title[^>]*>([^<]+)<\/title>/) || [])[1];
    const desc = (svg.match(/<desc[^>]*>([^<]+)<\/desc>/) || [])[1];
    const problems = [];
    if (!title) problems.push('no <title> as its first element');
    if (!desc) problems.push('no <desc>');
    if (!/<svg\b[^>]*role="img"/.test(svg)) problems.push('no role="img"');
    return problems;
  } catch (err) {
    return [`cannot read it: ${err.code || err.message}`];
  }
}

const MIN_TEXT_PX = 8.5; // the smallest text a figure may show, after the browser scaled it

/**
 * Problems with a page's figures at one width: each image loaded, with alt text; charts and
 * diagrams in a <figure>, readable (their smallest text at least MIN_TEXT_PX once scaled), and
 * a chart's narrow variant served on a phone.
 */
function judgeImages(images, builtDir, narrow) {
  const problems = [];
  let charts = 0;
  let diagrams = 0;
  for (const img of images) {
    const where = img.src;
    if (!img.alt.trim()) problems.push(`${where} has no alt text`);
    if (!img.loaded) {
      problems.push(`${where} did not load`);
      continue;
    }
    const kind = /(^|\/)charts\//.test(img.src) ? 'chart' : /(^|\/)diagrams\//.test(img.src) ? 'diagram' : null;
    if (!kind) continue;
    if (kind === 'chart') charts++;
    else diagrams++;
    if (!img.figure) problems.push(`${where} is not in a <figure>`);
    const svgFile = path.join(builtDir, decodeURI(new URL(img.current).pathname));
    const scale = img.natural ? img.shown / img.natural : 1;
    const font = smallestFont(svgFile);
    if (font !== null && font * scale < MIN_TEXT_PX) {
      problems.push(`${path.basename(svgFile)} is scaled to ${Math.round(scale * 100)} %: its smallest text is ` +
        `${(font * scale).toFixed(1)} px (at least ${MIN_TEXT_PX} wanted)`);
    }
    const narrowFile = svgFile.replace(/(-narrow)?\.svg$/, '-narrow.svg');
    if (kind === 'chart' && narrow && fs.existsSync(narrowFile) && !svgFile.endsWith('-narrow.svg')) {
      problems.push(`${where}: the phone-sized ${path.basename(narrowFile)} was not served`);
    }
    for (const p of svgAccessibility(svgFile)) problems.push(`${path.basename(svgFile)}: ${p}`);
  }
  return { problems, charts, diagrams };
}

module.exports = { layoutInPage, featuresInPage, judgeImages, svgAccessibility, smallestFont };
