'use strict';
// A scheduler's timeline, drawn with Vega-Lite from the Chrome trace that `./workshop trace N`
// writes: one lane per worker, the time it ran tasks as bars, the time it was parked shaded,
// the time it helped while waiting outlined, and a mark where a steal got something.
//
//   node tools/lib/timeline.js TRACE.json OUT.svg
//
// A run has up to millions of events and a picture has about a thousand pixels across: tasks
// closer together than one pixel merge into one bar, and successful steals are marked at most
// once a pixel and lane (the summary that ./workshop trace prints has the exact counts).

const fs = require('node:fs');
const path = require('node:path');
const { render, PALETTE } = require('./charts');

const WIDTH = 900;

/** The trace's slices per lane ({worker, name, start, end} in µs) and its instant events. */
function readTrace(trace) {
  const slices = [];
  const instants = [];
  const open = new Map();  // `${tid} ${name}` -> stack of start times
  let end = 0;
  for (const e of trace.traceEvents) {
    if (e.ph === 'M') continue;
    end = Math.max(end, e.ts);
    const key = `${e.tid} ${e.name}`;
    if (e.ph === 'B') {
      if (!open.has(key)) open.set(key, []);
      open.get(key).push(e.ts);
    } else if (e.ph === 'E') {
      const stack = open.get(key);
      if (!stack || stack.length === 0) throw new Error(`an end of "${e.name}" on worker ${e.tid} without its begin at ${e.ts} µs`);
      const start = stack.pop();
      // Nested slices of one name (a task run while helping inside a task) count once.
      if (stack.length === 0) slices.push({ worker: e.tid, name: e.name, start, end: e.ts });
    } else if (e.ph === 'i') {
      instants.push({ worker: e.tid, name: e.name, t: e.ts, ...(e.args || {}) });
    }
  }
  const workers = trace.traceEvents.filter((e) => e.ph === 'M' && e.name === 'thread_name').length;
  // The run: from the first task's start to the last task's end, as ./workshop trace sums it up.
  const tasks = slices.filter((s) => s.name === 'task');
  const start = tasks.length ? Math.min(...tasks.map((s) => s.start)) : 0;
  if (tasks.length) end = Math.max(...tasks.map((s) => s.end));
  return { slices, instants, workers, start, end };
}

/** Intervals of one lane and name merged where the gap is under `gap` µs. */
function merge(slices, gap) {
  const byLane = new Map();
  for (const s of slices) {
    const k = `${s.worker} ${s.name}`;
    if (!byLane.has(k)) byLane.set(k, []);
    byLane.get(k).push(s);
  }
  const out = [];
  for (const list of byLane.values()) {
    list.sort((a, b) => a.start - b.start);
    let cur = null;
    for (const s of list) {
      if (cur && s.start - cur.end < gap) cur.end = Math.max(cur.end, s.end);
      else {
        if (cur) out.push(cur);
        cur = { ...s };
      }
    }
    if (cur) out.push(cur);
  }
  return out;
}

function timelineSpec(trace, title) {
  const { slices, instants, workers, start, end } = readTrace(trace);
  const pixel = Math.max(end - start, 1) / WIDTH;
  const clip = (t) => Math.min(Math.max(t, start), end);
  const bars = merge(slices, pixel).filter((s) => s.end > start && s.start < end)
    .map((s) => ({ ...s, lane: `worker ${s.worker}`, ms0: (clip(s.start) - start) / 1000, ms1: (clip(Math.max(s.end, s.start + pixel)) - start) / 1000 }));
  const seen = new Set();
  const steals = [];
  for (const i of instants) {
    if (i.name !== 'steal' || !(i.got > 0) || i.t < start || i.t > end) continue;
    const key = `${i.worker} ${Math.floor(i.t / pixel)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    steals.push({ lane: `worker ${i.worker}`, ms: (i.t - start) / 1000 });
  }
  const lanes = Array.from({ length: workers }, (_, w) => `worker ${w}`);
  const colour = PALETTE[trace.otherData && trace.otherData.lesson] || '#4e79a7';
  const y = { field: 'lane', type: 'nominal', sort: lanes, title: null, scale: { domain: lanes, paddingInner: 0.25 } };
  const x = { field: 'ms0', type: 'quantitative', title: 'time (ms)', scale: { domain: [0, (end - start) / 1000] } };
  const layer = (name, mark) => ({ transform: [{ filter: `datum.name === '${name}'` }], mark, encoding: { y, x, x2: { field: 'ms1' } } });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    description: `${title}: one lane per worker; bars are tasks running, grey is parked, outlined is helping while waiting; marks above a lane are steals that got work.`,
    width: WIDTH,
    height: Math.max(60, 34 * workers),
    title: { text: title, anchor: 'start', fontSize: 14 },
    background: 'white',
    layer: [
      { data: { values: bars }, layer: [
        layer('parked', { type: 'rect', color: '#d9d9d9' }),
        layer('task', { type: 'rect', color: colour }),
        layer('helping', { type: 'rect', filled: false, stroke: '#333333', strokeWidth: 1 }),
      ] },
      { data: { values: steals.length ? steals : [{ lane: lanes[0], ms: -1 }] },
        transform: [{ filter: 'datum.ms >= 0' }],
        mark: { type: 'tick', orient: 'vertical', color: '#b22222', thickness: 2, yOffset: -12, size: 8 },
        encoding: { y, x: { field: 'ms', type: 'quantitative' } } },
    ],
  };
}

async function drawTimeline(traceFile, outFile) {
  const trace = JSON.parse(fs.readFileSync(traceFile, 'utf8'));
  const other = trace.otherData || {};
  const title = `${other.lesson || 'pool'} on ${other.workload || 'a workload'}`;
  const spec = timelineSpec(trace, title);
  fs.writeFileSync(outFile, await render(spec, title, spec.description));
  return outFile;
}

if (require.main === module) {
  const [traceFile, outFile] = process.argv.slice(2);
  if (!traceFile || !outFile) {
    console.error('usage: node tools/lib/timeline.js TRACE.json OUT.svg');
    process.exitCode = 2;
  } else {
    drawTimeline(path.resolve(traceFile), path.resolve(outFile)).then((f) => console.log(`timeline: ${f}`), (err) => {
      console.error(`timeline: ${err.message}`);
      process.exitCode = 1;
    });
  }
}

module.exports = { readTrace, merge, timelineSpec, drawTimeline };
