'use strict';
// Unit tests of the book's figures and page finishing: the generator stamps (lib/figures.js),
// reading benchmark JSON for the charts (lib/charts.js), the search's word splitting
// (lib/search.js) and the rules that finish HonKit's pages (lib/postprocess.js).

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const figures = require('./lib/figures');
const charts = require('./lib/charts');
const { tokenize } = require('./lib/search');
const post = require('./lib/postprocess');
const timeline = require('./lib/timeline');

const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><title>t</title><rect/></svg>\n';

test('a stamped SVG is up to date until its source, its generator or the SVG itself changes', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'figures-test-'));
  const file = path.join(dir, 'x.svg');
  const info = { generator: 'g', generatorSha256: 'G1', source: 'x.json', sourceSha256: 'S1' };
  fs.writeFileSync(file, figures.stamp(SVG, info));
  assert.deepStrictEqual(figures.staleness(file, { sourceSha256: 'S1', generatorSha256: 'G1' }), []);
  assert.match(figures.staleness(file, { sourceSha256: 'S2' })[0], /older than its source x\.json/);
  assert.match(figures.staleness(file, { generatorSha256: 'G2' })[0], /older version of g/);
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('<rect/>', '<rect x="1"/>'));
  assert.match(figures.staleness(file, {})[0], /edited after it was drawn/);
  fs.writeFileSync(file, SVG);
  assert.match(figures.staleness(file, {})[0], /no generator stamp/);
  assert.deepStrictEqual(figures.staleness(path.join(dir, 'missing.svg'), {}), ['is missing']);
});

test('charts read the medians of a Google Benchmark report, in the tool\'s order', () => {
  const report = charts.parseReport(JSON.stringify({
    context: { date: '2026-11-22T06:18:22+00:00', num_cpus: 2, mhz_per_cpu: 2300, host_name: 'vm' },
    benchmarks: [
      { run_name: 'wake/onetbb/manual_time', aggregate_name: 'median', repetitions: 9, real_time: 30, time_unit: 'us' },
      { run_name: 'flat_spawn/lesson01/real_time', aggregate_name: 'mean', repetitions: 3, real_time: 1, time_unit: 'ms' },
      { run_name: 'flat_spawn/lesson01/real_time', aggregate_name: 'median', repetitions: 3, real_time: 209, time_unit: 'ms' },
      { run_name: 'flat_spawn/sequential/real_time', aggregate_name: 'median', repetitions: 3, real_time: 9.32, time_unit: 'ms' },
    ],
  }).replace('"real_time": 30', '"real_time": 30, "x": NaN'));
  const { workloads } = charts.readResults(report);
  assert.deepStrictEqual(workloads.map((w) => w.name), ['flat_spawn', 'wake']);
  assert.deepStrictEqual(workloads[0].rows.map((r) => r.contender), ['sequential', 'lesson01']);
  assert.strictEqual(workloads[0].rows[1].seconds, 0.209);
  assert.strictEqual(workloads[1].repetitions, 9);
  assert.strictEqual(charts.fmtTime(45.1e-6), '45.1 µs');
  assert.strictEqual(charts.fmtTime(0.0932), '93.2 ms');
  const run = charts.describeRun(report, '/x/bench_lesson04.json');
  assert.strictEqual(run.reference, 'lesson03');
  assert.strictEqual(run.command, './workshop bench 4 --save-to-book');
  assert.strictEqual(charts.describeRun(report, 'tour.json').kind, 'tour');
  assert.strictEqual(charts.colourOf('lesson07'), charts.PALETTE.lesson07);
});

test('the search keeps compound words whole and in parts', () => {
  assert.deepStrictEqual(tokenize('std::memory_order_acquire);'), ['std::memory_order_acquire', 'std', 'memory_order_acquire']);
  assert.deepStrictEqual(tokenize('Work-stealing, C++20.'), ['work-stealing', 'work', 'stealing', 'c++20']);
});

test('the page rules: figures, headings, callouts, listings, tables, chapter links', () => {
  assert.match(post.figures('<p><img src="x.png" alt="a" title="Cap"></img></p>', os.tmpdir()),
    /^<figure class="figure figure-image"><img src="x.png" alt="a"><figcaption>Cap<\/figcaption><\/figure>$/);
  assert.strictEqual(post.headingLinks('<h2 id="a-b">A b</h2>'), '<h2 id="a-b"><a class="heading-link" href="#a-b">A b</a></h2>');
  assert.match(post.callouts('<blockquote>\n<p><strong>Common bug</strong> text</p></blockquote>'),
    /<blockquote class="callout callout-common-bug">\n<p><strong class="callout-title">Common bug<\/strong> text/);
  assert.match(post.callouts('<blockquote><p>[!WARNING] text</p></blockquote>'), /callout-warning/);
  assert.strictEqual(post.callouts('<blockquote><p><strong>Nothing</strong></p></blockquote>'),
    '<blockquote><p><strong>Nothing</strong></p></blockquote>');
  assert.match(post.listings('<pre><code>x</code></pre>'), /^<div class="listing"><button class="copy-button"/);
  const table = post.tables('<table><thead><tr><th>a</th><th>b</th><th>c</th></tr></thead><tbody><tr><td>1</td><td>2</td><td>3</td></tr></tbody></table>');
  assert.match(table, /<table class="wide-table">/);
  assert.match(table, /<td data-label="b">2<\/td>/);
  const nav = post.pageNav('<section class="normal markdown-section">x</section>' +
    '<a href="p.html" class="navigation navigation-prev " aria-label="Previous page: P">' +
    '<a href="n.html" class="navigation navigation-next " aria-label="Next page: Lesson 05: Parking">');
  assert.match(nav, /<a class="chapter-nav-next" rel="next" href="n.html">.*Lesson 05: Parking/);
});

test('a timeline reads a run of 320,000 tasks (the run\'s bounds without spreading them as arguments)', () => {
  const traceEvents = [0, 1].map((tid) => ({ ph: 'M', name: 'thread_name', pid: 1, tid, args: { name: `worker ${tid}` } }));
  for (let i = 0; i < 320000; ++i) {
    const ts = 10 + i * 0.3;
    traceEvents.push({ ph: 'B', name: 'task', pid: 1, tid: i % 2, ts }, { ph: 'E', name: 'task', pid: 1, tid: i % 2, ts: ts + 0.5 });
  }
  const { start, end, workers } = timeline.readTrace({ traceEvents });
  assert.strictEqual(workers, 2);
  assert.strictEqual(start, 10);
  assert.ok(Math.abs(end - (10 + 319999 * 0.3 + 0.5)) < 1e-6, `end ${end}`);
});

test('a timeline takes its lesson\'s colour from the charts, lessons 08 and 09 too', () => {
  for (const lesson of ['lesson07', 'lesson08', 'lesson09']) {
    const spec = timeline.timelineSpec({ lesson, workload: 'tree', workers: 2, run_ms: 1, bars: [], steals: [], injector: [] }, 't');
    assert.ok(JSON.stringify(spec).includes(charts.colourOf(lesson)), lesson);
  }
});
