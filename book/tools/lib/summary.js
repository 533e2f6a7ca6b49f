'use strict';
// mdBook's SUMMARY.md, read two ways:
//   parseSummary()      -> the chapters, in order, with their part (used by the build and the check)
//   toHonkitSummary()   -> the same table of contents in the dialect HonKit understands
//
// Where the two dialects differ:
//   mdBook                              HonKit
//   `# Summary` title (ignored)         an h1 is ignored too, but we drop it to be explicit
//   `# Part title`                      parts are h2-h4 headings, so `## Part title`
//   `---` separator                     no meaning; dropped
//   `[Title](file.md)` prefix/suffix    a bare paragraph is ignored, so `- [Title](file.md)`
//   `- [Title]()` draft chapter         an empty link breaks HonKit; a plain `- Title` entry

const LINK_ITEM = /^(\s*)[-*]\s+\[(.*)\]\((.*)\)\s*$/;
const BARE_LINK = /^\[(.*)\]\((.*)\)\s*$/;
const HEADING = /^#\s+(.*?)\s*#*\s*$/;
const SEPARATOR = /^\s*(-{3,}|\*{3,}|_{3,})\s*$/;

function lines(text) {
  return text.split(/\r?\n/);
}

/** Returns [{ title, path, part, draft, depth }] in reading order. `path` is null for drafts. */
function parseSummary(text) {
  const chapters = [];
  let part = null;
  let seenContent = false;
  for (const line of lines(text)) {
    const heading = line.match(HEADING);
    if (heading) {
      if (seenContent) part = heading[1];
      seenContent = true;
      continue;
    }
    const item = line.match(LINK_ITEM);
    const bare = item ? null : line.match(BARE_LINK);
    if (!item && !bare) continue;
    seenContent = true;
    const title = item ? item[2] : bare[1];
    const target = (item ? item[3] : bare[2]).trim();
    const depth = item ? Math.floor(item[1].replace(/\t/g, '    ').length / 2) : 0;
    chapters.push({ title, path: target || null, part, draft: !target, depth });
  }
  return chapters;
}

/** Rewrites mdBook's SUMMARY.md into HonKit's dialect (see the table at the top). */
function toHonkitSummary(text) {
  const out = [];
  let seenContent = false;
  for (const line of lines(text)) {
    const heading = line.match(HEADING);
    if (heading) {
      if (seenContent) out.push(`## ${heading[1]}`);
      seenContent = true;
      continue;
    }
    if (SEPARATOR.test(line)) continue;
    const item = line.match(LINK_ITEM);
    if (item) {
      seenContent = true;
      const [, indent, title, target] = item;
      out.push(target.trim() ? line : `${indent}- ${title}`);
      continue;
    }
    const bare = line.match(BARE_LINK);
    if (bare) {
      seenContent = true;
      out.push(bare[2].trim() ? `- [${bare[1]}](${bare[2].trim()})` : `- ${bare[1]}`);
      continue;
    }
    out.push(line);
  }
  return out.join('\n');
}

module.exports = { parseSummary, toHonkitSummary };
