'use strict';
// A scheduler's timeline, drawn with Vega-Lite from the Chrome trace that `./workshop trace N`
// writes: one lane per worker, the time it ran tasks as bars, the time it was parked shaded,
// the time it helped while waiting outlined, a mark above the lane where a steal got something
// and one below it where the worker took work from the injector.
//
//   node tools/lib/timeline.js TRACE.json OUT.svg   draw one trace
//   node tools/lib/timeline.js --book TRACE.json NAME
//        keep the trace, reduced to what the picture shows, as src/timelines/NAME.json, and
//        draw src/timelines/NAME.svg from it (./workshop trace N --save-to-book does this)
//   node tools/lib/timeline.js --stack NAME A B ...
//        src/timelines/NAME.stack.svg: the book's timelines A, B, ... (names of src/timelines/
//        *.json) one above the other on one time axis, so their lengths compare at a glance;
//        the list is kept as src/timelines/NAME.stack.json
//   node tools/lib/timeline.js                      redraw every src/timelines/*.svg
//   node tools/lib/timeline.js --check              say which are stale (exit 1 if any)
//
// A run has up to millions of events and a picture has about a thousand pixels across: tasks
// closer together than one pixel merge into one bar, and successful steals are marked at most
// once a pixel and lane, injector takes likewise (the summary that ./workshop trace prints has
// the exact counts).

const fs = require('node:fs');
const path = require('node:path');
const { render, colourOf } = require('./charts');
const figures = require('./figures');

const GENERATOR = 'book/tools/lib/timeline.js';
const BOOK_DIR = path.resolve(__dirname, '..', '..', 'src', 'timelines');

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
  // Loops, not Math.min(...list): spread as arguments, the tasks of a big run (fib(27) by
  // lesson 09's coroutines has 317,811) overflow the call stack.
  let start = tasks.length ? Infinity : 0;
  if (tasks.length) end = -Infinity;
  for (const s of tasks) {
    start = Math.min(start, s.start);
    end = Math.max(end, s.end);
  }
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

/**
 * What the picture shows, small enough to keep in the repository: the run's bars (tasks,
 * parked, helping) merged to the picture's resolution, successful steals at most one a pixel
 * and lane, in ms from the run's start (its first task).
 */
function reduce(trace) {
  const { slices, instants, workers, start, end } = readTrace(trace);
  const pixel = Math.max(end - start, 1) / WIDTH;
  const clip = (t) => Math.min(Math.max(t, start), end);
  const ms = (t) => Math.round((clip(t) - start)) / 1000;  // to the microsecond
  const bars = merge(slices, pixel).filter((s) => s.end > start && s.start < end)
    .map((s) => ({ lane: s.worker, name: s.name, ms0: ms(s.start), ms1: ms(Math.max(s.end, s.start + pixel)) }));
  // At most one mark a pixel and lane: `keep` says which instants are marked.
  const marks = (keep) => {
    const seen = new Set();
    const out = [];
    for (const i of instants) {
      if (!keep(i) || i.t < start || i.t > end) continue;
      const key = `${i.worker} ${Math.floor((i.t - start) / pixel)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ lane: i.worker, ms: ms(i.t) });
    }
    return out;
  };
  const steals = marks((i) => i.name === 'steal' && i.got > 0);
  const injector = marks((i) => i.name === 'injector');
  const other = trace.otherData || {};
  return { lesson: other.lesson || 'pool', workload: other.workload || '?', workers, run_ms: ms(end), machine: other.machine || null, bars, steals, injector };
}

// Where it ran: on a busy machine a gap in a lane may be the OS running something else.
function subtitleOf(data) {
  const m = data.machine;
  if (!m) return null;
  const load = m.load_average == null ? '' : `, load average ${m.load_average}`;
  return `${m.cpus} CPUs${load} (${m.cpu_model || 'unknown CPU'}); ${m.command || ''}`;
}

const DESCRIPTION = 'one lane per worker; bars are tasks running, grey is parked or asleep, outlined is helping while waiting; red marks above a lane are steals that got work, blue marks below it are takes from the injector.';

// One timeline's layers; `axisMs` is the end of its time axis (a stack shares one).
function timelineSpec(data, title, axisMs = data.run_ms) {
  const lanes = Array.from({ length: data.workers }, (_, w) => `worker ${w}`);
  const named = (list) => list.map((d) => ({ ...d, lane: `worker ${d.lane}` }));
  const colour = colourOf(data.lesson);  // as in every chart (lessons 08 and 09 have no PALETTE entry)
  const y = { field: 'lane', type: 'nominal', sort: lanes, title: null, scale: { domain: lanes, paddingInner: 0.25 } };
  const x = { field: 'ms0', type: 'quantitative', title: 'time (ms)', scale: { domain: [0, axisMs] } };
  const layer = (name, mark) => ({ transform: [{ filter: `datum.name === '${name}'` }], mark, encoding: { y, x, x2: { field: 'ms1' } } });
  // Vega-Lite needs a row of data to draw a layer: an empty list gets one that is filtered out.
  const ticks = (list, color, yOffset) => ({
    data: { values: list.length ? named(list) : [{ lane: lanes[0], ms: -1 }] },
    transform: [{ filter: 'datum.ms >= 0' }],
    mark: { type: 'tick', orient: 'vertical', color, thickness: 2, yOffset, size: 8 },
    encoding: { y, x: { field: 'ms', type: 'quantitative', scale: { domain: [0, axisMs] } } },
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    description: `${title}: ${DESCRIPTION}`,
    width: WIDTH,
    height: Math.max(60, 34 * data.workers),
    title: { text: title, anchor: 'start', fontSize: 14, ...(subtitleOf(data) ? { subtitle: subtitleOf(data), subtitleFontSize: 11 } : {}) },
    background: 'white',
    layer: [
      { data: { values: named(data.bars) }, layer: [
        layer('parked', { type: 'rect', color: '#d9d9d9' }),
        layer('task', { type: 'rect', color: colour }),
        layer('helping', { type: 'rect', filled: false, stroke: '#333333', strokeWidth: 1 }),
      ] },
      ticks(data.steals, '#b22222', -12),
      ticks(data.injector || [], '#1f4e9c', 12),
    ],
  };
}

/** Timelines one above the other on one time axis: the longest run sets it. */
function stackSpec(list, title) {
  const axisMs = Math.max(...list.map((d) => d.run_ms));
  const views = list.map((d) => {
    const { $schema, background, description, ...view } = timelineSpec(d, titleOf(d), axisMs);
    return view;
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    description: `${title}, on one time axis: ${DESCRIPTION}`,
    background: 'white',
    spacing: 24,
    vconcat: views,
  };
}

function titleOf(data) {
  return `${data.lesson} on ${data.workload}, ${data.workers} workers`;
}

/** Draws a trace (or its reduced form) into outFile; with `stamp`, stamped for the book. */
async function drawTimeline(input, outFile, stamp = null) {
  const data = input.traceEvents ? reduce(input) : input;
  const spec = timelineSpec(data, titleOf(data));
  let svg = await render(spec, titleOf(data), spec.description);
  if (stamp) {
    svg = figures.stamp(svg, { generator: GENERATOR, generatorSha256: generatorHash(), ...stamp });
  }
  fs.writeFileSync(outFile, svg);
  return outFile;
}

/** Draws the stack NAME.stack.json lists (names of src/timelines/*.json) as NAME.stack.svg. */
async function drawStack(stackFile) {
  const { members, sourceSha256 } = readStack(stackFile);
  const list = members.map((m) => JSON.parse(fs.readFileSync(path.join(path.dirname(stackFile), `${m}.json`), 'utf8')));
  const title = `${[...new Set(list.map((d) => d.lesson))].join(', ')} on ${[...new Set(list.map((d) => d.workload))].join(', ')}`;
  const spec = stackSpec(list, title);
  let svg = await render(spec, title, spec.description);
  svg = figures.stamp(svg, { generator: GENERATOR, generatorSha256: generatorHash(), source: path.basename(stackFile), sourceSha256 });
  const out = stackFile.replace(/\.json$/, '.svg');
  fs.writeFileSync(out, svg);
  return out;
}

// A stack's source is its list and every timeline in it: a redrawn member makes it stale.
function readStack(stackFile) {
  const text = fs.readFileSync(stackFile);
  const { members } = JSON.parse(text);
  if (!Array.isArray(members) || members.length === 0) throw new Error(`${stackFile}: "members" must list timelines`);
  const dir = path.dirname(stackFile);
  const sourceSha256 = figures.sha256(text, ...members.map((m) => fs.readFileSync(path.join(dir, `${m}.json`))));
  return { text, members, sourceSha256 };
}

function generatorHash() {
  return figures.sha256(fs.readFileSync(__filename), fs.readFileSync(require.resolve('./charts')));
}

async function drawBookTimeline(jsonFile) {
  if (jsonFile.endsWith('.stack.json')) return drawStack(jsonFile);
  const text = fs.readFileSync(jsonFile);
  const svg = jsonFile.replace(/\.json$/, '.svg');
  return drawTimeline(JSON.parse(text), svg, { source: path.basename(jsonFile), sourceSha256: figures.sha256(text) });
}

/** Problems with the timelines of src/timelines/ (an empty list when all are up to date). */
function staleTimelines(dir = BOOK_DIR) {
  if (!fs.existsSync(dir)) return [];
  const problems = [];
  const generatorSha256 = generatorHash();
  const jsons = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  for (const json of jsons) {
    let sourceSha256;
    try {
      sourceSha256 = json.endsWith('.stack.json') ? readStack(path.join(dir, json)).sourceSha256 : figures.sha256(fs.readFileSync(path.join(dir, json)));
    } catch (err) {
      problems.push(`timelines/${json} cannot be read: ${err.message}`);
      continue;
    }
    const svg = json.replace(/\.json$/, '.svg');
    for (const p of figures.staleness(path.join(dir, svg), { sourceSha256, generatorSha256 })) problems.push(`timelines/${svg} ${p}`);
  }
  for (const svg of fs.readdirSync(dir).filter((f) => f.endsWith('.svg')).sort()) {
    if (!jsons.includes(svg.replace(/\.svg$/, '.json'))) problems.push(`timelines/${svg} has no JSON to be drawn from`);
  }
  return problems;
}

async function main(argv) {
  if (argv[0] === '--check') {
    const problems = staleTimelines();
    for (const p of problems) console.error(`stale: ${p}`);
    return problems.length ? 1 : 0;
  }
  if (argv[0] === '--book') {
    const [, traceFile, name] = argv;
    if (!traceFile || !/^[\w.-]+$/.test(name || '')) throw new Error('usage: --book TRACE.json NAME');
    fs.mkdirSync(BOOK_DIR, { recursive: true });
    const json = path.join(BOOK_DIR, `${name}.json`);
    fs.writeFileSync(json, `${JSON.stringify(reduce(JSON.parse(fs.readFileSync(traceFile, 'utf8'))))}\n`);
    console.log(`timeline: ${await drawBookTimeline(json)}`);
    return 0;
  }
  if (argv[0] === '--stack') {
    const [, name, ...members] = argv;
    if (!/^[\w.-]+$/.test(name || '') || members.length === 0) throw new Error('usage: --stack NAME TIMELINE...');
    for (const m of members) {
      if (!fs.existsSync(path.join(BOOK_DIR, `${m}.json`))) throw new Error(`no timeline ${m}: src/timelines/${m}.json does not exist`);
    }
    const file = path.join(BOOK_DIR, `${name}.stack.json`);
    fs.writeFileSync(file, `${JSON.stringify({ members }, null, 1)}\n`);
    console.log(`timeline: ${await drawStack(file)}`);
    return 0;
  }
  if (argv.length === 0) {
    if (!fs.existsSync(BOOK_DIR)) return 0;
    for (const json of fs.readdirSync(BOOK_DIR).filter((f) => f.endsWith('.json')).sort()) {
      console.log(`timeline: ${await drawBookTimeline(path.join(BOOK_DIR, json))}`);
    }
    return 0;
  }
  const [traceFile, outFile] = argv;
  if (!traceFile || !outFile) throw new Error('usage: node tools/lib/timeline.js TRACE.json OUT.svg');
  console.log(`timeline: ${await drawTimeline(JSON.parse(fs.readFileSync(traceFile, 'utf8')), path.resolve(outFile))}`);
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (err) => {
    console.error(`timeline: ${err.message}`);
    process.exitCode = 1;
  });
}

module.exports = { readTrace, merge, reduce, timelineSpec, stackSpec, drawTimeline, staleTimelines };
