'use strict';
// Provenance stamps for the book's generated figures (charts from benchmark JSON, diagrams
// from Graphviz sources), so that the build can tell, without redrawing anything, whether a
// committed SVG is still what its source and its generator would draw.
//
// A generated SVG carries, right after its opening <svg> tag:
//
//   <metadata id="workshop-figure">{"generator":"...","source":"tour.json",
//     "sourceSha256":"...","generatorSha256":"...","svgSha256":"..."}</metadata>
//
//   sourceSha256     the source it was drawn from (the JSON, the .dot file)
//   generatorSha256  the code that drew it (so a change of style makes every figure stale)
//   svgSha256        the SVG itself without this element (so a hand edit shows)

const crypto = require('node:crypto');
const fs = require('node:fs');

const STAMP = /<metadata id="workshop-figure">([^<]*)<\/metadata>/;

function sha256(...parts) {
  const hash = crypto.createHash('sha256');
  for (const p of parts) hash.update(p);
  return hash.digest('hex');
}

// The SVG as it was before stamping: the stamp element removed.
function unstamped(svg) {
  return svg.replace(STAMP, '');
}

/** Inserts the stamp after the opening <svg ...> tag. `info` has generator and source names. */
function stamp(svg, { generator, generatorSha256, source, sourceSha256 }) {
  const open = svg.match(/<svg\b[^>]*>/);
  if (!open) throw new Error('not an SVG document');
  const body = unstamped(svg);
  const meta = { generator, source, sourceSha256, generatorSha256, svgSha256: sha256(body) };
  const element = `<metadata id="workshop-figure">${JSON.stringify(meta)}</metadata>`;
  const at = body.indexOf(open[0]) + open[0].length;
  return body.slice(0, at) + element + body.slice(at);
}

/** The stamp of an SVG document, or null. */
function readStamp(svg) {
  const m = svg.match(STAMP);
  if (!m) return null;
  try {
    return JSON.parse(m[1]);
  } catch {
    return null;
  }
}

/**
 * Problems with a generated SVG (an empty list when it is up to date). `expect` gives what the
 * stamp must say: { sourceSha256 (omit to skip the source), generatorSha256 (omit to skip) }.
 */
function staleness(svgFile, expect) {
  if (!fs.existsSync(svgFile)) return ['is missing'];
  const svg = fs.readFileSync(svgFile, 'utf8');
  const s = readStamp(svg);
  if (!s) return ['has no generator stamp (it was not drawn by the book\'s tools, or was edited by hand)'];
  const problems = [];
  if (s.svgSha256 !== sha256(unstamped(svg))) problems.push('was edited after it was drawn');
  if (expect.sourceSha256 && s.sourceSha256 !== expect.sourceSha256) {
    problems.push(`is older than its source ${s.source}`);
  }
  if (expect.generatorSha256 && s.generatorSha256 !== expect.generatorSha256) {
    problems.push(`was drawn by an older version of ${s.generator}`);
  }
  return problems;
}

/**
 * Charts and diagrams older than their sources, as messages that say how to redraw them. The
 * student edition (./workshop export-student) carries only the SVGs its chapters show, not their
 * sources: there only hand edits are looked for.
 */
function staleFigures(bookDir, srcDir) {
  const path = require('node:path');
  const { staleCharts } = require('./charts');
  const { staleDiagrams } = require('./diagrams');
  if (fs.existsSync(path.join(bookDir, '..', '.student-edition'))) {
    const problems = [];
    for (const dir of ['charts', 'diagrams', 'timelines']) {
      const full = path.join(srcDir, dir);
      if (!fs.existsSync(full)) continue;
      for (const svg of fs.readdirSync(full).filter((f) => f.endsWith('.svg') && readStamp(fs.readFileSync(path.join(full, f), 'utf8')))) {
        for (const p of staleness(path.join(full, svg), {})) problems.push(`src/${dir}/${svg} ${p}`);
      }
    }
    return problems;
  }
  return [
    ...staleCharts(path.join(srcDir, 'charts')).map((p) => `src/${p}: redraw with \`npm run charts\` in book/ (or ./workshop charts)`),
    ...staleDiagrams(path.join(srcDir, 'diagrams')).map((p) => `src/${p}: redraw with \`npm run diagrams\` in book/`),
    ...require('./timeline').staleTimelines(path.join(srcDir, 'timelines')).map((p) => `src/${p}: redraw with \`npm run timelines\` in book/`),
  ];
}

module.exports = { sha256, stamp, readStamp, staleness, unstamped, staleFigures };
