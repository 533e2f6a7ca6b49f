'use strict';
// Renders the Markdown inside <details> blocks, which HonKit would otherwise show as raw text.
//
// mdBook follows CommonMark: an HTML block such as `<details>` ends at the first blank line, so
// the Markdown after it (paragraphs, `code`, fenced blocks) is rendered as usual. HonKit's
// Markdown parser instead takes everything from `<details>` to `</details>` as one raw HTML
// block, blank lines included. The workshop's hints are written that way:
//
//   <details>
//   <summary>Hint 1: a short title</summary>
//
//   Markdown text.
//
//   </details>
//
// so here the body of each such block (between the `</summary>` line and `</details>`) is turned
// into HTML with a CommonMark renderer, and HonKit receives a block of plain HTML.

const MarkdownIt = require('markdown-it');

const md = new MarkdownIt({ html: true });
const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
const OPEN = /^\s*<details(\s[^>]*)?>\s*$/i;
const SUMMARY = /^\s*<summary>.*<\/summary>\s*$/i;
const CLOSE = /^\s*<\/details>\s*$/i;

/** Returns `text` with every top-level <details> block's body rendered to HTML. */
function renderDetails(text) {
  const lines = text.split('\n');
  const out = [];
  let fence = null; // the fence that opened the code block we are in, if any
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const f = line.match(FENCE);
    if (fence) {
      if (f && f[1][0] === fence[0] && f[1].length >= fence.length) fence = null;
      out.push(line);
      continue;
    }
    if (f) {
      fence = f[1];
      out.push(line);
      continue;
    }
    const end = OPEN.test(line) ? findClose(lines, i + 1) : -1;
    if (end < 0) {
      out.push(line);
      continue;
    }
    // `<details>`, then an optional `<summary>` line, then Markdown up to `</details>`.
    let bodyStart = i + 1;
    while (bodyStart < end && lines[bodyStart].trim() === '') bodyStart++;
    const head = [line];
    if (bodyStart < end && SUMMARY.test(lines[bodyStart])) head.push(lines[bodyStart++]);
    const body = md.render(lines.slice(bodyStart, end).join('\n')).trimEnd();
    out.push(...head, body, lines[end]);
    i = end;
  }
  return out.join('\n');
}

// Index of the `</details>` line closing the block opened just before `from`, or -1.
function findClose(lines, from) {
  let depth = 1;
  let fence = null;
  for (let j = from; j < lines.length; j++) {
    const f = lines[j].match(FENCE);
    if (fence) {
      if (f && f[1][0] === fence[0] && f[1].length >= fence.length) fence = null;
      continue;
    }
    if (f) {
      fence = f[1];
      continue;
    }
    if (OPEN.test(lines[j])) depth++;
    else if (CLOSE.test(lines[j]) && --depth === 0) return j;
  }
  return -1;
}

module.exports = { renderDetails };
