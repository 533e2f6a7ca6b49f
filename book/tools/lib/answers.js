'use strict';
// "No solution before the attempt": a page outside the Solutions part of SUMMARY.md may include
// from solutions/ only code that the learner's starter holds verbatim too. A lesson chapter
// shows the given code (from lessons/NN_topic/, or carried code, identical in both trees); the
// reference code of what the learner writes belongs on the lesson's solution page.
//
// The Solutions part is one contiguous block of SUMMARY.md between the lines
// `<!-- solutions -->` and `<!-- /solutions -->`, and every page in it is named
// `solution-*.md`, so that the student edition can drop the block and the files in one step.
//
//   checkInclude(page, resolved, spec, options)  one include: null, or why it shows an answer
//   includesOf(text, sourceFile)                 the {{#include}}s of a page, nested ones too
//   solutionsPart(summaryText)                   the pages of the Solutions part, and problems
//   AnswerCheck                                  all of it for the preprocessor, one page a call

const fs = require('node:fs');
const path = require('node:path');
const { parseSpec, parseTarget, selectLines } = require('./include');
const { parseSummary } = require('./summary');

const SOLUTIONS_START = '<!-- solutions -->';
const SOLUTIONS_END = '<!-- /solutions -->';
const SOLUTION_PAGE = /^solution-[^/]*\.md$/;
// The same directive syntax as lib/include.js; `\{{#...}}` is escaped and includes nothing.
const DIRECTIVE = /\\\{\{#.*?\}\}|\{\{\s*#include\s+([^}]+)\}\}/g;
const MAX_DEPTH = 10;

// Chapters whose reference code has not moved to a solution page yet. Their includes from
// solutions/ are reported as warnings, not errors. Remove a chapter once it is moved.
const NOT_MOVED_YET = new Set([]);

function splitLines(text) {
  const lines = text.split(/\r?\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

// The lines `spec` selects from `text`, or null when it selects nothing there (no such anchor,
// a range past the end). Marker lines are dropped, as the include itself drops them.
function selection(text, spec) {
  try {
    const lines = selectLines(text, spec, (why) => {
      throw new Error(why);
    });
    return Array.isArray(lines) ? lines : null;
  } catch {
    return null;
  }
}

// Does `haystack` hold `needle` as a run of consecutive lines?
function containsRun(haystack, needle) {
  if (needle.length === 0) return true;
  for (let i = 0; i + needle.length <= haystack.length; i += 1) {
    let j = 0;
    while (j < needle.length && haystack[i + j] === needle[j]) j += 1;
    if (j === needle.length) return true;
  }
  return false;
}

function describeSpec(spec) {
  if (spec.kind === 'anchor') return `anchor '${spec.name}'`;
  if (spec.kind === 'range') return `lines ${spec.start}-${spec.end === Infinity ? 'end' : spec.end}`;
  return 'the whole file';
}

/**
 * Checks one include of `page` (its path in src/, e.g. `lesson-04-chase-lev.md`): `resolved` is
 * the absolute path of the included file, `spec` what it selects (lib/include.js's parseSpec:
 * the anchor, a line range or the whole file). Returns null when the include is allowed, else
 * why it is not. options: { repoRoot, solutionPages: Set of pages of the Solutions part }.
 *
 * Allowed: anything on a page of the Solutions part; anything not under solutions/; and from
 * solutions/NN_topic/FILE, code that lessons/NN_topic/FILE holds verbatim: the same selection
 * with the same text (a carried file, or an anchor region of given code), or the selected lines
 * as one run of consecutive lines of the starter (given code the starter does not mark).
 */
function checkInclude(page, resolved, spec, options) {
  if (options.solutionPages.has(page)) return null;
  const fromRoot = path.relative(options.repoRoot, resolved).split(path.sep);
  if (fromRoot[0] !== 'solutions' || fromRoot.length < 3) return null;
  const lessonDir = fromRoot[1];
  const rest = fromRoot.slice(2).join('/');
  const solutionFile = `solutions/${lessonDir}/${rest}`;
  const starterFile = `lessons/${lessonDir}/${rest}`;
  const where = `shows ${describeSpec(spec)} of ${solutionFile}, the reference solution`;
  const advice = 'include the given code from lessons/, or move this to the lesson\'s solution page ' +
    `(solution-*.md, listed between ${SOLUTIONS_START} and ${SOLUTIONS_END} in SUMMARY.md)`;

  let starterText;
  try {
    starterText = fs.readFileSync(path.join(options.repoRoot, 'lessons', lessonDir, ...fromRoot.slice(2)), 'utf8');
  } catch {
    return `${where}, and the starter has no ${starterFile}: ${advice}`;
  }
  const shown = selection(fs.readFileSync(resolved, 'utf8'), spec);
  if (shown === null) return null; // the include itself fails, with a better message
  const inStarter = selection(starterText, spec);
  if (inStarter !== null && inStarter.join('\n') === shown.join('\n')) return null;
  const starterLines = splitLines(starterText).filter((l) => !/ANCHOR:|ANCHOR_END:/.test(l));
  if (containsRun(starterLines, shown)) return null;

  let why;
  if (inStarter === null) {
    why = `${starterFile} has no such ${spec.kind === 'anchor' ? 'anchor' : 'lines'}, nor these lines`;
  } else {
    const at = shown.findIndex((line, i) => line !== inStarter[i]);
    const k = at < 0 ? shown.length : at;
    const clip = (s) => (s === undefined ? '(nothing)' : `"${s.trim().slice(0, 60)}"`);
    why = `${starterFile} differs at line ${k + 1} of it: ${clip(inStarter[k])} where the solution has ${clip(shown[k])}`;
  }
  return `${where}, which the starter does not hold verbatim (${why}): ${advice}`;
}

/**
 * Every {{#include}} of `text` (read from `sourceFile`) and, recursively, of what it includes:
 * [{ directive, resolved, spec }]. Unreadable files and bad specs are skipped: lib/include.js
 * reports those.
 */
function includesOf(text, sourceFile, depth = 0) {
  const found = [];
  if (depth >= MAX_DEPTH) return found;
  for (const match of text.matchAll(DIRECTIVE)) {
    if (match[0].startsWith('\\')) continue;
    const { file, spec: rawSpec } = parseTarget(match[1]);
    if (file === '') continue;
    const spec = parseSpec(rawSpec);
    const resolved = path.resolve(path.dirname(sourceFile), file);
    found.push({ directive: match[0].trim(), resolved, spec });
    let content;
    try {
      content = fs.readFileSync(resolved, 'utf8');
    } catch {
      continue;
    }
    const selected = selection(content, spec);
    if (selected) found.push(...includesOf(selected.join('\n'), resolved, depth + 1));
  }
  return found;
}

/**
 * The Solutions part of SUMMARY.md: { pages: Set of chapter paths, problems: [messages] }.
 * No markers at all means no Solutions part (and no problem).
 */
function solutionsPart(summaryText) {
  const lines = summaryText.split(/\r?\n/);
  const starts = [];
  const ends = [];
  lines.forEach((line, i) => {
    if (line.trim() === SOLUTIONS_START) starts.push(i);
    if (line.trim() === SOLUTIONS_END) ends.push(i);
  });
  const problems = [];
  const pages = new Set();
  if (starts.length === 0 && ends.length === 0) return { pages, problems };
  if (starts.length !== 1 || ends.length !== 1 || ends[0] < starts[0]) {
    problems.push(`SUMMARY.md: the Solutions part must be one block: one line "${SOLUTIONS_START}", ` +
      `then one line "${SOLUTIONS_END}" (found ${starts.length} and ${ends.length})`);
    return { pages, problems };
  }
  for (const chapter of parseSummary(lines.slice(starts[0] + 1, ends[0]).join('\n'))) {
    if (!chapter.path) continue;
    pages.add(chapter.path);
    if (!SOLUTION_PAGE.test(chapter.path)) {
      problems.push(`SUMMARY.md: '${chapter.title}' (${chapter.path}) is in the Solutions part, ` +
        'so its file name must start with solution- (the student edition drops solution-*.md)');
    }
  }
  const outside = parseSummary([...lines.slice(0, starts[0]), ...lines.slice(ends[0] + 1)].join('\n'));
  for (const chapter of outside) {
    if (chapter.path && SOLUTION_PAGE.test(path.basename(chapter.path))) {
      problems.push(`SUMMARY.md: '${chapter.title}' (${chapter.path}) is a solution page outside the ` +
        `Solutions part: list it between ${SOLUTIONS_START} and ${SOLUTIONS_END}`);
    }
  }
  return { pages, problems };
}

/**
 * The check as the preprocessor runs it: construct once per build with the book's folder and
 * SUMMARY.md's text (`problems` holds what is wrong with the Solutions part), then call
 * checkPage for every Markdown page. `notMovedYet` defaults to NOT_MOVED_YET.
 */
class AnswerCheck {
  constructor(bookDir, summaryText, { notMovedYet = NOT_MOVED_YET } = {}) {
    const { pages, problems } = solutionsPart(summaryText);
    this.options = { repoRoot: path.resolve(bookDir, '..'), solutionPages: pages };
    this.problems = problems;
    this.notMovedYet = notMovedYet;
  }

  /**
   * `source` is the page's absolute path, `page` its path in src/, `displayName` its name in
   * messages. Returns { errors, warnings }: an error per include that shows an answer, naming
   * the page and the include; on a chapter that is not moved yet, one warning instead.
   */
  checkPage(source, page, displayName = page) {
    const errors = [];
    const warnings = [];
    const pageName = page.split(path.sep).join('/');
    if (SOLUTION_PAGE.test(path.basename(pageName)) && !this.options.solutionPages.has(pageName)) {
      errors.push(`${displayName}: a solution page (solution-*.md) must be listed in SUMMARY.md's ` +
        `Solutions part, between ${SOLUTIONS_START} and ${SOLUTIONS_END}`);
    }
    const shown = [];
    for (const inc of includesOf(fs.readFileSync(source, 'utf8'), source)) {
      const why = checkInclude(pageName, inc.resolved, inc.spec, this.options);
      if (why) shown.push({ directive: inc.directive, why });
    }
    if (!this.notMovedYet.has(pageName)) {
      errors.push(...shown.map((s) => `${displayName}: ${s.directive}: ${s.why}`));
    } else if (shown.length > 0) {
      warnings.push(`${displayName} still shows reference code in ${shown.length} include(s), ` +
        `allowed until its chapter is moved (NOT_MOVED_YET in tools/lib/answers.js): ` +
        shown.map((s) => s.directive).join(', '));
    } else {
      warnings.push(`${displayName} shows no reference code any more: remove it from NOT_MOVED_YET ` +
        'in tools/lib/answers.js');
    }
    return { errors, warnings };
  }
}

module.exports = {
  AnswerCheck, checkInclude, includesOf, solutionsPart, NOT_MOVED_YET, SOLUTIONS_START, SOLUTIONS_END,
};
