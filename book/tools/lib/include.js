'use strict';
// Expands mdBook's {{#include ...}} directives, the way mdBook does, but strictly:
// a missing file, a missing anchor or an unknown directive is an error, never an empty block.
//
//   {{#include path}}          the whole file
//   {{#include path:name}}     the lines between `ANCHOR: name` and `ANCHOR_END: name`
//   {{#include path:N}}        line N only (lines count from 1)
//   {{#include path:N:M}}      lines N to M
//   {{#include path::M}}       lines 1 to M
//   {{#include path:N:}}       line N to the end
//
// Paths are relative to the directory of the .md file that holds the directive. Every line that
// contains `ANCHOR:` or `ANCHOR_END:` is dropped from the included text: those markers are for
// the tools, not for the reader. Included text is expanded again (mdBook does the same), so an
// included Markdown fragment may itself include files; the depth is bounded.

const fs = require('node:fs');
const path = require('node:path');

// Same shape as mdBook's link regex: `\{{#...}}` is an escaped directive, kept literally.
const DIRECTIVE = /\\\{\{#.*?\}\}|\{\{\s*#([a-zA-Z0-9_]+)\s+([^}]+)\}\}/g;
const ANCHOR_START = /ANCHOR:\s*([\w-]+)/;
const ANCHOR_END = /ANCHOR_END:\s*([\w-]+)/;
const MARKER = /ANCHOR:|ANCHOR_END:/;
const MAX_DEPTH = 10;

class IncludeError extends Error {}

function isMarker(line) {
  return MARKER.test(line);
}

// Splits "file.hpp:spec" into the path and what follows the first colon.
function parseTarget(target) {
  const trimmed = target.trim();
  const colon = trimmed.indexOf(':');
  if (colon < 0) return { file: trimmed, spec: null };
  return { file: trimmed.slice(0, colon), spec: trimmed.slice(colon + 1) };
}

// Returns { kind: 'all' } | { kind: 'anchor', name } | { kind: 'range', start, end } where start
// and end are 1-based and inclusive; end === Infinity means "to the end of the file".
function parseSpec(spec) {
  if (spec === null || spec === '') return { kind: 'all' };
  const parts = spec.split(':');
  const isNumber = (s) => /^\d+$/.test(s);
  if (parts.length === 1 && !isNumber(parts[0])) return { kind: 'anchor', name: parts[0] };
  if (parts.length === 1) {
    const n = Number(parts[0]);
    return { kind: 'range', start: n, end: n };
  }
  if (parts.length === 2 && (parts[0] === '' || isNumber(parts[0])) &&
      (parts[1] === '' || isNumber(parts[1]))) {
    return {
      kind: 'range',
      start: parts[0] === '' ? 1 : Number(parts[0]),
      end: parts[1] === '' ? Infinity : Number(parts[1]),
    };
  }
  return { kind: 'invalid' };
}

function splitLines(text) {
  const lines = text.split(/\r?\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

// Returns the lines of the first region named `name`, or null when the file has no such anchor.
function anchoredLines(lines, name) {
  let inside = false;
  const kept = [];
  for (const line of lines) {
    if (!inside) {
      const start = line.match(ANCHOR_START);
      if (start && start[1] === name && !ANCHOR_END.test(line)) inside = true;
      continue;
    }
    const end = line.match(ANCHOR_END);
    if (end && end[1] === name) return kept;
    if (!isMarker(line)) kept.push(line);
  }
  return inside ? { unterminated: true } : null;
}

function selectLines(text, spec, fail) {
  const lines = splitLines(text);
  switch (spec.kind) {
    case 'all':
      return lines.filter((l) => !isMarker(l));
    case 'anchor': {
      const kept = anchoredLines(lines, spec.name);
      if (kept === null) fail(`anchor '${spec.name}' not found (expected a line with "ANCHOR: ${spec.name}")`);
      if (kept.unterminated) fail(`anchor '${spec.name}' has no matching "ANCHOR_END: ${spec.name}"`);
      return kept;
    }
    case 'range':
      if (spec.start < 1 || spec.end < spec.start) fail('line range must satisfy 1 <= N <= M');
      if (spec.start > lines.length) fail(`line ${spec.start} is past the end of the file (${lines.length} lines)`);
      return lines.slice(spec.start - 1, spec.end).filter((l) => !isMarker(l));
    default:
      return fail('unrecognised include target (use path, path:anchor, path:N, path:N:M, path::M or path:N:)');
  }
}

/**
 * Expands every directive in `text`, which was read from the file `sourceFile` (absolute path).
 * `displayName` names that file in error messages. Throws IncludeError on any problem.
 */
function expandIncludes(text, sourceFile, displayName = sourceFile, depth = 0) {
  return text.replace(DIRECTIVE, (whole, kind, target) => {
    if (whole.startsWith('\\')) return whole.slice(1);
    const fail = (why) => {
      throw new IncludeError(`${displayName}: ${whole.trim()}: ${why}`);
    };
    if (kind !== 'include') {
      fail(`unsupported directive '#${kind}' (this build supports only #include)`);
    }
    if (depth >= MAX_DEPTH) fail(`includes nested deeper than ${MAX_DEPTH} levels`);
    const { file, spec } = parseTarget(target);
    if (file === '') fail('no file named');
    const resolved = path.resolve(path.dirname(sourceFile), file);
    let content;
    try {
      content = fs.readFileSync(resolved, 'utf8');
    } catch (err) {
      fail(`cannot read '${file}' (resolved to ${resolved}): ${err.code || err.message}`);
    }
    const selected = selectLines(content, parseSpec(spec), fail).join('\n');
    return expandIncludes(selected, resolved, `${displayName} -> ${file}`, depth + 1);
  });
}

module.exports = { expandIncludes, IncludeError, parseSpec, parseTarget, selectLines };
