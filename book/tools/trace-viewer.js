#!/usr/bin/env node
'use strict';
// Opens a trace.json written by `./workshop trace` in Chromium's own trace viewer and checks that
// the viewer shows what the file holds: one track per worker, named as the file names it, and on
// each track as many slices as the file has begin events on that worker (tasks, parked time,
// helping). Prints one `PASS ...` or `FAIL ...` line per check, then `N passed, N failed`, and
// exits non-zero if anything failed.
//
// Which viewer: chrome://tracing does not open in this Chromium (Debian's 156: headless, even
// with the internal debugging pages enabled, it fails with net::ERR_FAILED), so the check uses
// the trace viewer that replaced it, the Performance panel of the DevTools bundled inside
// Chromium (devtools://devtools/bundled/trace_app.html): nothing is downloaded. The file goes in
// through the panel's own "Load profile" file chooser, as a reader's would; the tracks and
// slices are read from the flame chart the panel draws and from the model it parsed. Instant
// events (steals, injector takes) are in the file but this panel does not draw them on thread
// tracks, so they are not counted.
//
// Usage: node tools/trace-viewer.js TRACE.json
const fs = require('node:fs');
const { chromium } = require('playwright-core');

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const VIEWER = 'devtools://devtools/bundled/trace_app.html';
const TIMEOUT_MS = 30_000;

const results = { passed: 0, failed: 0 };
function report(ok, message) {
  console.log(`${ok ? 'PASS' : 'FAIL'} ${message}`);
  results[ok ? 'passed' : 'failed'] += 1;
}

// What the file holds: each worker's name and its number of slices (begin events).
function expectedFrom(file) {
  const trace = JSON.parse(fs.readFileSync(file, 'utf8'));
  const workers = new Map();
  for (const e of trace.traceEvents) {
    if (e.ph === 'M' && e.name === 'thread_name') workers.set(e.tid, { name: e.args.name, slices: 0 });
  }
  for (const e of trace.traceEvents) {
    if (e.ph === 'B') workers.get(e.tid).slices += 1;
  }
  return workers;
}

// In the viewer's page: the flame chart's track names and entry count, and per thread of the
// parsed model its name and number of entries.
async function readViewer() {
  const Timeline = await import('./panels/timeline/timeline.js');
  const panel = Timeline.TimelinePanel.TimelinePanel.instance();
  let parsed;
  try {
    parsed = panel.getParsedTraceForLayoutTests();
  } catch {
    return null;  // still loading
  }
  const data = panel.getFlameChart().getMainDataProvider().timelineData();
  const threads = [];
  for (const [pid, process] of (parsed.data || parsed).Renderer.processes) {
    for (const [tid, thread] of process.threads) {
      threads.push({ pid, tid, name: thread.name, entries: thread.entries.length });
    }
  }
  return { tracks: data.groups.map((g) => g.name), entries: data.entryLevels.length, threads };
}

async function main() {
  const file = process.argv[2];
  if (!file || !fs.existsSync(file)) {
    console.error('usage: node tools/trace-viewer.js TRACE.json (a file ./workshop trace wrote)');
    process.exit(2);
  }
  const expected = expectedFrom(file);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(VIEWER, { timeout: TIMEOUT_MS });
    // DevTools is ready (its locale data loaded) once it has drawn its tabs.
    await page.getByText('Performance', { exact: true }).first().waitFor({ timeout: TIMEOUT_MS });
    await page.evaluate(async () => {
      const UI = await import('./ui/legacy/legacy.js');
      await UI.ViewManager.ViewManager.instance().showView('timeline');
    });
    const [chooser] = await Promise.all([
      page.waitForEvent('filechooser', { timeout: TIMEOUT_MS }),
      page.evaluate(async () => {
        const Timeline = await import('./panels/timeline/timeline.js');
        Timeline.TimelinePanel.TimelinePanel.instance().selectFileToLoad();
      }),
    ]);
    await chooser.setFiles(file);
    const start = Date.now();
    let shown = null;
    while (shown === null && Date.now() - start < TIMEOUT_MS) {
      await page.waitForTimeout(200);
      shown = await page.evaluate(readViewer);
    }
    report(shown !== null, `the Performance panel loaded ${file}` +
      (shown === null ? ` (nothing after ${TIMEOUT_MS / 1000} s)` : ''));
    if (shown === null) return;
    report(errors.length === 0, `no script error in the viewer${errors.length ? `: ${errors[0]}` : ''}`);
    let slices = 0;
    for (const [tid, worker] of expected) {
      slices += worker.slices;
      const track = shown.tracks.find((name) => name.startsWith(`${worker.name} (`));
      report(track !== undefined, `a track for ${worker.name} (tracks: ${shown.tracks.join(', ')})`);
      const thread = shown.threads.find((t) => t.tid === tid);
      const got = thread ? thread.entries : 0;
      report(got === worker.slices, `${worker.name}: ${got} slices shown, ${worker.slices} in the file`);
    }
    const lanes = shown.tracks.filter((name) => /^worker \d+ \(/.test(name)).length;
    report(lanes === expected.size, `${lanes} worker tracks, ${expected.size} workers in the file`);
    report(shown.entries === slices, `${shown.entries} slices in the flame chart, ${slices} in the file`);
  } finally {
    await browser.close();
  }
}

main()
  .catch((err) => report(false, `the check itself failed: ${err.message.split('\n')[0]}`))
  .finally(() => {
    console.log(`${results.passed} passed, ${results.failed} failed`);
    process.exitCode = results.failed === 0 && results.passed > 0 ? 0 : 1;
  });
