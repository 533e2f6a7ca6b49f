'use strict';
// The book's diagrams: Graphviz sources in src/diagrams/*.dot, drawn to SVG with `dot -Tsvg`
// (Debian's graphviz package). The SVGs are committed beside their sources, so the book builds
// without Graphviz (and with plain mdBook); each carries a stamp (lib/figures.js) with the hash
// of its source and of this file, which the build checks: a diagram older than its .dot file,
// or edited by hand, stops the build.
//
//   node tools/lib/diagrams.js            redraw every diagram (npm run diagrams)
//   node tools/lib/diagrams.js --check    only say which diagrams are stale (exit 1 if any)
//
// A source names its diagram for screen readers in two comment lines, which become the SVG's
// <title> and <desc> (the chapter's alt text says the same in its own words):
//
//   // title: The pool's architecture
//   // desc: Four workers, each with its own deque, ...

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const figures = require('./figures');

const GENERATOR = 'book/tools/lib/diagrams.js';
const FONTS = 'DejaVu Sans, Verdana, Helvetica, Arial, sans-serif';

function escapeXml(s) {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** { title, desc } from a .dot source's `// title:` and `// desc:` lines (desc may continue on `//` lines). */
function describe(source) {
  const title = (source.match(/^\/\/\s*title:\s*(.+)$/m) || [])[1];
  const lines = source.split('\n');
  const at = lines.findIndex((l) => /^\/\/\s*desc:/.test(l));
  let desc = null;
  if (at >= 0) {
    const parts = [lines[at].replace(/^\/\/\s*desc:\s*/, '')];
    for (let i = at + 1; i < lines.length && /^\/\/\s+\S/.test(lines[i]) && !/^\/\/\s*\w+:/.test(lines[i]); i++) {
      parts.push(lines[i].replace(/^\/\/\s*/, ''));
    }
    desc = parts.join(' ').trim();
  }
  return { title: title && title.trim(), desc };
}

// Graphviz's SVG, made fit for the book: pixel sizes (1 pt of the layout = 1 px), the book's
// fonts, no tooltips naming node ids, and a <title> and <desc> for screen readers.
function tidy(svg, { title, desc }) {
  let out = svg
    .replace(/<\?xml[^>]*>\s*/, '')
    .replace(/<!DOCTYPE[^>]*>\s*/, '')
    .replace(/<!--[\s\S]*?-->\s*/g, '')
    .replace(/<title>[^<]*<\/title>\s*/g, '')
    .replace(/font-family="[^"]*"/g, `font-family="${FONTS}"`);
  out = out.replace(/<svg\b[^>]*>/, (open) => open
    .replace(/width="([\d.]+)pt"/, (w, n) => `width="${Math.ceil(Number(n))}"`)
    .replace(/height="([\d.]+)pt"/, (h, n) => `height="${Math.ceil(Number(n))}"`)
    .replace(/<svg/, '<svg role="img" aria-labelledby="diagram-title diagram-desc"') +
    `<title id="diagram-title">${escapeXml(title)}</title><desc id="diagram-desc">${escapeXml(desc)}</desc>`);
  return out.trimEnd() + '\n';
}

function generatorHash() {
  return figures.sha256(fs.readFileSync(__filename));
}

function dotVersion() {
  const r = spawnSync('dot', ['-V'], { encoding: 'utf8' });
  if (r.error) return null;
  return (r.stderr || r.stdout).trim();
}

/** Draws src/diagrams/NAME.dot to NAME.svg beside it. Throws with the reason when it cannot. */
function drawDiagram(dotFile) {
  const source = fs.readFileSync(dotFile, 'utf8');
  const about = describe(source);
  const name = path.basename(dotFile);
  if (!about.title || !about.desc) throw new Error(`${name}: give it "// title: ..." and "// desc: ..." lines`);
  const r = spawnSync('dot', ['-Tsvg', dotFile], { encoding: 'utf8' });
  if (r.error) {
    throw new Error('Graphviz is not installed (the diagrams are drawn with its `dot`): sudo apt-get install graphviz');
  }
  if (r.status !== 0) throw new Error(`dot failed on ${name}:\n${r.stderr}`);
  const svg = figures.stamp(tidy(r.stdout, about), {
    generator: `${GENERATOR} (${dotVersion()})`, generatorSha256: generatorHash(),
    source: name, sourceSha256: figures.sha256(source),
  });
  const target = dotFile.replace(/\.dot$/, '.svg');
  fs.writeFileSync(target, svg);
  return target;
}

/** Problems with the diagrams of src/diagrams/ (an empty list when every one is up to date). */
function staleDiagrams(dir) {
  if (!fs.existsSync(dir)) return [];
  const problems = [];
  const generator = generatorHash();
  const files = fs.readdirSync(dir).sort();
  for (const dot of files.filter((f) => f.endsWith('.dot'))) {
    const source = fs.readFileSync(path.join(dir, dot), 'utf8');
    const svg = dot.replace(/\.dot$/, '.svg');
    for (const p of figures.staleness(path.join(dir, svg), { sourceSha256: figures.sha256(source), generatorSha256: generator })) {
      problems.push(`diagrams/${svg} ${p}`);
    }
    const about = describe(source);
    if (!about.title || !about.desc) problems.push(`diagrams/${dot} has no "// title:" or "// desc:" line`);
  }
  for (const svg of files.filter((f) => f.endsWith('.svg'))) {
    if (!files.includes(svg.replace(/\.svg$/, '.dot'))) {
      problems.push(`diagrams/${svg} has no .dot source (diagrams are drawn from source, never by hand)`);
    }
  }
  return problems;
}

function main(argv) {
  const dir = path.resolve(__dirname, '..', '..', 'src', 'diagrams');
  if (argv.includes('--check')) {
    const problems = staleDiagrams(dir);
    for (const p of problems) console.error(`stale: ${p}`);
    if (problems.length) console.error('diagrams: redraw them with `npm run diagrams` (in book/)');
    else console.log('diagrams: every diagram is up to date with its source');
    return problems.length ? 1 : 0;
  }
  const sources = argv.filter((a) => a.endsWith('.dot')).map((a) => path.resolve(a));
  const all = sources.length ? sources : fs.readdirSync(dir).filter((f) => f.endsWith('.dot')).sort().map((f) => path.join(dir, f));
  for (const dot of all) console.log(`diagram: ${path.relative(process.cwd(), drawDiagram(dot))}`);
  return 0;
}

if (require.main === module) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (err) {
    console.error(`diagrams: ${err.message}`);
    process.exitCode = 1;
  }
}

module.exports = { drawDiagram, staleDiagrams, describe, tidy };
