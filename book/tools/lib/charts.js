'use strict';
// The benchmark charts, drawn with Vega-Lite from Google Benchmark's JSON (the files that
// `./workshop bench N --save-to-book` and `./workshop tour --save-to-book` write).
//
// For X.json it draws X.svg (two columns of panels, for the book's column at desktop width) and
// X-narrow.svg (one column, for phones: the build serves it below 600 px). Every chart has one
// panel per workload (small multiples), each with its own unit; every contender keeps the same
// colour in every chart (PALETTE). tour.json also gets tour-progression(-narrow).svg: each
// lesson's pool along the lessons, oneTBB and OpenMP as reference lines.
//
// Each SVG carries a stamp (lib/figures.js) with the hashes of its JSON and of this file, which
// the build checks: a chart older than its JSON, or than this code, stops the build.
//
//   node tools/lib/charts.js                       redraw every chart of src/charts/*.json
//   node tools/lib/charts.js RUN.json [--out DIR]  draw one run's charts (into DIR, default: beside it)
//   node tools/lib/charts.js --check               only say which charts are stale (exit 1 if any)
//
// `npm run charts` and `./workshop charts` run the first; `./workshop bench` and `tour` the second.

const fs = require('node:fs');
const path = require('node:path');
const figures = require('./figures');

const GENERATOR = 'book/tools/lib/charts.js';

// ---------------------------------------------------------------------------------------------
// What is drawn: contenders, their colours, the workloads and what each measures.

// The order contenders appear in. tools/workshop_cli/benchmarks.py orders its printed tables
// by a list of its own: the same lessons and peers, without the floors and variants drawn here.
const ORDER = ['sequential', 'lesson00', 'lesson01', 'lesson02', 'lesson03', 'lesson04', 'lesson05',
  'lesson05-naive', 'lesson06', 'lesson07', 'lesson08', 'lesson08_1w', 'lesson09', 'onetbb', 'openmp',
  'floor', 'fence_based', 'futex_floor', 'static_split', 'std::function', 'ws::Task'];

// One colour per contender, the same in every chart of the book.
const PALETTE = {
  sequential: '#767676',
  lesson00: '#a6761d',
  lesson01: '#4e79a7',
  lesson02: '#f28e2b',
  lesson03: '#e15759',
  lesson04: '#3f9f99',
  lesson05: '#59a14f',
  'lesson05-naive': '#9cce8f',
  lesson06: '#c9a227',
  lesson07: '#b07aa1',
  onetbb: '#1f3a5f',
  openmp: '#9c5f3c',
  floor: '#b5aca8',
  futex_floor: '#b5aca8',
  static_split: '#b5aca8',
  fence_based: '#ff9da7',
  'std::function': '#8c8c8c',
  'ws::Task': '#a6761d',
};
const SPARE = ['#17becf', '#7f7f00', '#8c564b', '#e377c2', '#393b79'];

// Names as the book writes them.
const DISPLAY = { onetbb: 'oneTBB', openmp: 'OpenMP' };

function colourOf(name) {
  if (PALETTE[name]) return PALETTE[name];
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return SPARE[h % SPARE.length];
}

const WORKLOAD_ORDER = ['flat_spawn', 'spawn_tree', 'imbalanced', 'fib', 'reduce', 'idle_cpu', 'wake'];

const WALL = 'wall time per run';
const WORKLOADS = {
  flat_spawn: { what: '1,000,000 tiny tasks spawned from outside', measure: WALL },
  spawn_tree: { what: '262,143 tasks spawned by tasks', measure: WALL },
  imbalanced: { what: '20,000 uneven tasks, all spawned by one task', measure: WALL },
  fib: { what: 'fib(30) by join, no cutoff: 1,346,268 joins', measure: WALL },
  reduce: { what: 'parallel_reduce of sqrt(i) over 10^7 indices', measure: WALL },
  idle_cpu: { what: 'CPU an idle pool burns, just after some work', measure: 'CPU time per second idle' },
  wake: { what: 'one task spawned after 300 ms of idleness', measure: 'wake-up latency' },
  wake_latency: { what: 'one pool woken 20 times after 300 ms idle', measure: 'wake-up latency' },
  wake_vs_floor: { what: 'pools and a bare futex wake-up woken in turn, 20 rounds', measure: 'the last pool\'s wake-up latency' },
  trickle_cpu: { what: '2,000 tasks from outside, one every ~50 µs', measure: 'CPU time of the process per run' },
  owner_push_pop: { what: 'the owner\'s push + pop, items below', measure: 'time per push + pop' },
  owner_push_pop_last: { what: 'push + pop of the last item (a CAS)', measure: 'time per push + pop' },
  steal_1_thief: { what: 'one thief steals 4,096 items', measure: 'thief CPU time per batch' },
};

function workloadInfo(name) {
  if (WORKLOADS[name]) return WORKLOADS[name];
  let m = name.match(/^outside_spawn_(\d+)p$/);
  if (m) {
    const n = Number(m[1]);
    return { what: `400,000 tasks from ${n} outside thread${n === 1 ? '' : 's'}`, measure: WALL };
  }
  m = name.match(/^task_(\d+)B$/);
  if (m) return { what: `make, run and destroy a task of ${m[1]} bytes`, measure: 'time per task' };
  return { what: '', measure: 'time per iteration' };
}

// The lessons whose idea aimed at a workload (the closing chapter's figure marks them; the
// tool's printed tables mark the same cells, from the same file).
const TARGETS = require('./tour-targets.json');
const LESSONS = ['lesson01', 'lesson02', 'lesson03', 'lesson04', 'lesson05', 'lesson06', 'lesson07'];

// ---------------------------------------------------------------------------------------------
// Reading Google Benchmark's JSON.

// Google Benchmark writes NaN (and inf) for counters it cannot compute, which JSON.parse rejects.
function parseReport(text) {
  return JSON.parse(text.replace(/(:\s*)-?(NaN|Infinity|inf)\b/g, '$1null'));
}

const UNIT_SECONDS = { ns: 1e-9, us: 1e-6, ms: 1e-3, s: 1 };

/**
 * { workloads: [{ name, rows: [{ contender, seconds }] }], repetitions } from a report: the
 * median of each benchmark (or its only run), as tools/workshop_cli/benchmarks.py medians() reads it.
 */
function readResults(report) {
  const table = new Map();
  const repetitions = new Map(); // workload -> repetitions of its benchmarks
  for (const bm of report.benchmarks || []) {
    if (bm.aggregate_name !== undefined && bm.aggregate_name !== 'median') continue;
    const name = bm.run_name || bm.name;
    if (!name.includes('/')) continue;
    const [workload, contender] = name.split('/');
    if (!table.has(workload)) table.set(workload, new Map());
    table.get(workload).set(contender, bm.real_time * (UNIT_SECONDS[bm.time_unit || 'ns'] ?? 1e-9));
    repetitions.set(workload, Math.max(repetitions.get(workload) || 1, bm.repetitions || 1));
  }
  const rank = (w) => (WORKLOAD_ORDER.includes(w) ? WORKLOAD_ORDER.indexOf(w) : WORKLOAD_ORDER.length);
  const names = [...table.keys()].sort((a, b) => rank(a) - rank(b)); // stable: others in run order
  return {
    workloads: names.map((name) => ({
      name,
      repetitions: repetitions.get(name),
      rows: sortContenders([...table.get(name).keys()]).map((c) => ({ contender: c, seconds: table.get(name).get(c) })),
    })),
  };
}

function sortContenders(names) {
  const rank = (c) => (ORDER.includes(c) ? ORDER.indexOf(c) : 99);
  return [...names].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** What a run is, from its file name and context: title, reference contender, command. */
function describeRun(report, file) {
  const base = path.basename(file, '.json');
  const ctx = report.context || {};
  const all = new Set((report.benchmarks || []).map((b) => (b.run_name || b.name).split('/')[1]));
  let m = base.match(/^bench_lesson(\d\d)(_mine)?$/);
  if (m) {
    const n = Number(m[1]);
    const mine = Boolean(m[2]);
    return {
      kind: 'lesson',
      title: `Lesson ${m[1]} against its peers${mine ? ' (your code)' : ''}`,
      reference: n > 0 ? `lesson${String(n - 1).padStart(2, '0')}` : 'sequential',
      command: ctx.workshop_command || `./workshop bench ${n}${mine ? '' : ' --save-to-book'}`,
    };
  }
  if (base === 'tour') {
    return {
      kind: 'tour',
      title: 'The tour: every lesson\'s pool against sequential code, oneTBB and OpenMP',
      reference: all.has('onetbb') ? 'onetbb' : 'sequential',
      command: ctx.workshop_command || './workshop tour --save-to-book',
    };
  }
  m = base.match(/^(.*)$/);
  return { kind: 'other', title: m[1], reference: null, command: ctx.workshop_command || null };
}

// The contender a workload's ratios are relative to: the run's reference where it ran, else the
// row's first contender (e.g. ws::Task against std::function): benchmarks.row_reference().
function rowReference(rows, reference) {
  if (rows.some((r) => r.contender === reference)) return reference;
  return rows.length ? rows[0].contender : null;
}

// ---------------------------------------------------------------------------------------------
// Numbers and text.

const UNITS = [{ name: 's', scale: 1 }, { name: 'ms', scale: 1e3 }, { name: 'µs', scale: 1e6 }, { name: 'ns', scale: 1e9 }];

// The largest unit in which `seconds` is at least 1 (a hair less counts, for rounding).
function pickUnit(seconds) {
  return UNITS.find((u) => seconds * u.scale >= 0.9995) || UNITS[UNITS.length - 1];
}

// Three significant digits, as the tool's table prints them.
function fmt(x) {
  if (x === 0) return '0';
  const digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(x))));
  return Number(x.toFixed(Math.min(digits, 3))).toString();
}

// "45.1 µs", "9.32 ms": each value in its own unit (tools/workshop_cli/benchmarks.py fmt_ms).
function fmtTime(seconds) {
  const unit = pickUnit(seconds);
  return `${fmt(seconds * unit.scale)} ${unit.name}`;
}

// A Vega expression that labels an axis tick (datum.value, in seconds) with its unit.
const TIME_LABEL = UNITS.slice(0, -1).reduceRight(
  (rest, u) => `datum.value >= ${0.9995 / u.scale} ? format(datum.value * ${u.scale}, '.3~g') + ' ${u.name}' : ${rest}`,
  "format(datum.value * 1e9, '.3~g') + ' ns'");

function fmtRatio(r) {
  return `${r >= 10 ? r.toFixed(0) : r.toFixed(2)}×`;
}

// Advance widths of DejaVu Sans (the charts' first font; Verdana's are nearly the same), in
// 1/100 em, for characters 32-126, regular and bold. Vega measures text with these, so labels
// are laid out for the font the reader sees, not for a rough guess.
const WIDTHS = {
  regular: [32, 40, 46, 84, 64, 95, 78, 27, 39, 39, 50, 84, 32, 36, 32, 34, 64, 64, 64, 64, 64, 64, 64, 64, 64,
    64, 34, 34, 84, 84, 84, 53, 100, 68, 69, 70, 77, 63, 58, 77, 75, 29, 29, 66, 56, 86, 75, 79, 60, 79, 69, 63,
    61, 73, 68, 99, 69, 61, 69, 39, 34, 39, 84, 50, 50, 61, 63, 55, 63, 62, 35, 63, 63, 28, 28, 58, 28, 97, 63,
    61, 63, 63, 41, 52, 39, 63, 59, 82, 59, 59, 52, 64, 34, 64, 84],
  bold: [35, 46, 52, 84, 70, 100, 87, 31, 46, 46, 52, 84, 38, 42, 38, 37, 70, 70, 70, 70, 70, 70, 70, 70, 70, 70,
    40, 40, 84, 84, 84, 58, 100, 77, 76, 73, 83, 68, 68, 82, 84, 37, 37, 77, 64, 100, 84, 85, 73, 85, 77, 72, 68,
    81, 77, 110, 77, 72, 73, 46, 37, 46, 84, 50, 50, 67, 72, 59, 72, 68, 44, 72, 71, 34, 34, 67, 34, 104, 71, 69,
    72, 72, 49, 60, 48, 71, 65, 92, 65, 65, 58, 71, 37, 71, 84],
};

function textWidth(text, size, bold = false) {
  const table = bold ? WIDTHS.bold : WIDTHS.regular;
  let w = 0;
  for (const ch of String(text)) {
    const c = ch.codePointAt(0);
    w += c >= 32 && c < 127 ? table[c - 32] : ch === '—' || ch === '…' ? 100 : ch === '·' ? 32 : 84;
  }
  return (w * size) / 100;
}

// Greedy word wrap to a width in pixels.
function wrap(text, width, size, bold = false) {
  const lines = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const next = line ? `${line} ${word}` : word;
    if (line && textWidth(next, size, bold) > width) {
      lines.push(line);
      line = word;
    } else {
      line = next;
    }
  }
  if (line) lines.push(line);
  return lines;
}

function display(name) {
  return DISPLAY[name] || name;
}

// "2026-11-22 06:18 UTC"
function when(date) {
  const d = new Date(date);
  if (Number.isNaN(d.getTime())) return String(date || 'an unrecorded date');
  return `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 16)} UTC`;
}

function machine(ctx) {
  const parts = [];
  const cpus = ctx.num_cpus ? `${ctx.num_cpus} CPU${ctx.num_cpus === 1 ? '' : 's'}` : 'CPUs not recorded';
  const clock = ctx.mhz_per_cpu ? ` at ${(ctx.mhz_per_cpu / 1000).toFixed(ctx.mhz_per_cpu % 100 ? 2 : 1)} GHz` : '';
  parts.push(ctx.cpu_model ? `${ctx.cpu_model}, ${cpus}${clock}` : `${cpus}${clock} (CPU model not recorded)`);
  if (ctx.os) parts.push(ctx.os);
  return `host "${ctx.host_name || '?'}": ${parts.join('; ')}`;
}

/** The caption every chart carries: what, when, where, and the command that measured it. */
function caption(report, run, repetitions) {
  const ctx = report.context || {};
  return [
    `${repetitions}; lower is better.`,
    `Measured ${when(ctx.date)} on ${machine(ctx)}.`,
    run.command ? `Command: ${run.command}` : '',
  ].filter(Boolean);
}

// ---------------------------------------------------------------------------------------------
// Vega-Lite specifications.

const FONT = 'DejaVu Sans, Verdana, Helvetica, Arial, sans-serif';
const ROW = 19; // pixels per bar
const LABEL_SIZE = 11;

// wide: the book's column at desktop widths (860 px); narrow: a phone (the column is ~360 px).
const LAYOUTS = {
  wide: { width: 850, columns: 2, bars: 190, plot: 310 },
  narrow: { width: 350, columns: 1, bars: 125, plot: 250 },
};

function config() {
  return {
    font: FONT,
    background: 'white',
    padding: { left: 4, right: 4, top: 4, bottom: 4 },
    view: { stroke: null },
    axis: { labelFontSize: LABEL_SIZE, titleFontSize: LABEL_SIZE, titleFontWeight: 'normal', titleColor: '#333',
      labelColor: '#333', domainColor: '#999', tickColor: '#999', gridColor: '#e6e6e6' },
    title: { anchor: 'start', fontSize: 15, fontWeight: 'bold', subtitleFontSize: 11.5, subtitleColor: '#444',
      subtitlePadding: 4, offset: 14 },
    concat: { spacing: { row: 30, column: 34 } },
    text: { fontSize: LABEL_SIZE },
  };
}

// A time axis: logarithmic when the values span more than 20x (ticks at powers of ten, every
// other one when there are many), else linear from zero. Values are in seconds; the tick labels
// carry their unit, and the title says what is measured and which scale.
function timeScale(seconds, measure) {
  const min = Math.min(...seconds);
  const max = Math.max(...seconds);
  if (min > 0 && max / min > 20) {
    const lo = Math.floor(Math.log10(min));
    const hi = Math.ceil(Math.log10(max));
    const step = hi - lo > 4 ? 2 : 1;
    const values = [];
    for (let e = hi; e >= lo; e -= step) values.unshift(Number(`1e${e}`));
    return {
      scale: { type: 'log', domain: [Number(`1e${lo}`), Number(`1e${hi}`)], nice: false },
      axis: { values, labelExpr: TIME_LABEL, title: `${measure} (log scale)` },
    };
  }
  const unit = pickUnit(max);
  return {
    scale: { type: 'linear', domain: [0, max * 1.04], nice: false },
    axis: { tickCount: 3, labelExpr: `format(datum.value * ${unit.scale}, '.3~g') + ' ${unit.name}'`, title: measure },
  };
}

// One colour scale for every panel of a chart (so the panels agree), keyed by display name.
function colourScale(contenders) {
  const names = sortContenders([...new Set(contenders)]);
  return { domain: names.map(display), range: names.map(colourOf) };
}

// One panel: a bar per contender, and its value and ratio in two columns right of the bars.
function resultsPanel(workload, reference, layout, colours) {
  const info = workloadInfo(workload.name);
  const rows = workload.rows.filter((r) => r.seconds > 0);
  const ref = rows.length > 1 ? rowReference(rows, reference) : null;
  const refSeconds = ref ? rows.find((r) => r.contender === ref).seconds : null;
  const values = rows.map((r) => {
    const ratio = refSeconds ? r.seconds / refSeconds : null;
    return {
      name: display(r.contender),
      seconds: r.seconds,
      value: fmtTime(r.seconds),
      ratio: ratio === null ? '' : fmtRatio(ratio),
      aria: `${display(r.contender)}: ${fmtTime(r.seconds)}` +
        (ratio !== null && r.contender !== ref ? `, ${fmtRatio(ratio)} ${display(ref)}'s` : ''),
    };
  });
  const t = timeScale(values.map((d) => d.seconds), info.measure);
  const axisTitle = [t.axis.title];
  if (ref) axisTitle.push(`×: ratio to ${display(ref)} (dashed line)`);
  const x = {
    field: 'seconds', type: 'quantitative', scale: t.scale,
    axis: { ...t.axis, title: axisTitle, grid: true, labelFlush: true, labelOverlap: true, titleAnchor: 'start', titleX: 0 },
  };
  const y = { field: 'name', type: 'nominal', sort: values.map((d) => d.name), title: null,
    axis: { labelLimit: 120, ticks: false, domain: false, labelPadding: 6, minExtent: 84 } };
  const bar = { field: 'name', type: 'nominal', scale: colours, legend: null };
  const layers = [
    {
      mark: { type: 'bar', height: ROW - 5 },
      // On a log scale a bar starts at the left edge of the panel (there is no zero).
      encoding: { x: { ...x, stack: null }, ...(t.scale.type === 'log' ? { x2: { value: 0 } } : {}), y, color: bar,
        description: { field: 'aria' } },
    },
    {
      mark: { type: 'text', align: 'right', baseline: 'middle', fontSize: LABEL_SIZE, color: '#222' },
      encoding: { y, x: { value: layout.bars + 62 }, text: { field: 'value' }, description: { field: 'aria' } },
    },
  ];
  if (ref) {
    layers.push(
      {
        mark: { type: 'text', align: 'right', baseline: 'middle', fontSize: LABEL_SIZE, color: '#555' },
        encoding: { y, x: { value: layout.bars + 112 }, text: { field: 'ratio' }, description: { field: 'aria' } },
      },
      {
        data: { values: [{ seconds: refSeconds }] },
        mark: { type: 'rule', strokeDash: [4, 3], color: '#222', strokeWidth: 1 },
        encoding: { x: { field: 'seconds', type: 'quantitative' } },
      },
    );
  }
  return {
    title: { text: workload.name, subtitle: info.what ? wrap(info.what, layout.bars + 190, 11.5) : undefined },
    width: layout.bars,
    height: ROW * values.length,
    data: { values },
    layer: layers,
  };
}

// "Medians of 3 repetitions (wake: 9)"
function repetitionsText(workloads) {
  const counts = new Map();
  for (const w of workloads) counts.set(w.repetitions, (counts.get(w.repetitions) || 0) + 1);
  const usual = [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0];
  const others = workloads.filter((w) => w.repetitions !== usual).map((w) => `${w.name}: ${w.repetitions}`);
  return `Medians of ${usual} repetition${usual === 1 ? '' : 's'}${others.length ? ` (${others.join(', ')})` : ''}`;
}

function resultsSpec(report, run, layout) {
  const { workloads } = readResults(report);
  const shown = workloads.filter((w) => w.rows.some((r) => r.seconds > 0));
  if (shown.length === 0) throw new Error('no benchmark results to chart');
  const text = caption(report, run, repetitionsText(shown));
  const colours = colourScale(shown.flatMap((w) => w.rows.map((r) => r.contender)));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    description: `${run.title}. ${text.join(' ')}`,
    title: {
      text: wrap(run.title, layout.width - 10, 15, true),
      subtitle: text.flatMap((t) => wrap(t, layout.width - 10, 11.5)),
    },
    config: config(),
    columns: layout.columns,
    concat: shown.map((w) => resultsPanel(w, run.reference, layout, colours)),
  };
}

// The closing chapter's figure: every lesson's pool along the lessons, one panel per workload,
// oneTBB and OpenMP as reference lines; the lessons whose idea aimed at the workload stand out.
function progressionSpec(report, run, layout) {
  const { workloads } = readResults(report);
  const panels = [];
  const used = [];
  for (const w of workloads) {
    if (!TARGETS[w.name]) continue;
    const lessons = w.rows.filter((r) => LESSONS.includes(r.contender) && r.seconds > 0);
    if (lessons.length === 0) continue;
    used.push(w);
    const peers = w.rows.filter((r) => (r.contender === 'onetbb' || r.contender === 'openmp') && r.seconds > 0);
    const target = TARGETS[w.name];
    const t = timeScale(lessons.concat(peers).map((r) => r.seconds), workloadInfo(w.name).measure);
    const points = lessons.map((r) => {
      const aimed = target.lessons.includes(r.contender);
      return {
        lesson: r.contender.replace('lesson', ''),
        name: display(r.contender),
        seconds: r.seconds,
        aimed,
        label: aimed ? fmtTime(r.seconds) : '',
        aria: `${r.contender}: ${fmtTime(r.seconds)}${aimed ? ' (its idea aimed at this workload)' : ''}`,
      };
    });
    const lines = peers.map((r) => ({
      peer: display(r.contender), seconds: r.seconds, aria: `${display(r.contender)}: ${fmtTime(r.seconds)}`,
    }));
    const y = { field: 'seconds', type: 'quantitative', scale: t.scale,
      axis: { ...t.axis, labelFlush: true, labelOverlap: true } };
    const x = { field: 'lesson', type: 'ordinal', scale: { domain: LESSONS.map((l) => l.replace('lesson', '')) },
      axis: { title: 'lesson', labelAngle: 0 } };
    const peerScale = { domain: ['oneTBB', 'OpenMP'] };
    panels.push({
      title: { text: w.name, subtitle: wrap(target.why, layout.plot + 40, 11.5) },
      width: layout.plot,
      height: 160,
      layer: [
        {
          data: { values: lines },
          mark: { type: 'rule', strokeWidth: 1.5 },
          encoding: {
            y,
            color: { field: 'peer', type: 'nominal', title: 'reference lines',
              scale: { ...peerScale, range: [PALETTE.onetbb, PALETTE.openmp] } },
            strokeDash: { field: 'peer', type: 'nominal', title: 'reference lines',
              scale: { ...peerScale, range: [[1, 0], [6, 3]] } },
            description: { field: 'aria' },
          },
        },
        { data: { values: points }, mark: { type: 'line', color: '#aaaaaa', strokeWidth: 1.5 }, encoding: { x, y } },
        {
          data: { values: points },
          mark: { type: 'point', filled: true, opacity: 1, stroke: '#222' },
          encoding: {
            x, y,
            fill: { field: 'name', type: 'nominal', scale: colourScale(LESSONS), legend: null },
            size: { condition: { test: 'datum.aimed', value: 170 }, value: 45 },
            strokeWidth: { condition: { test: 'datum.aimed', value: 1.5 }, value: 0 },
            description: { field: 'aria' },
          },
        },
        {
          data: { values: points.filter((p) => p.aimed) },
          mark: { type: 'text', dy: -14, fontSize: LABEL_SIZE, fontWeight: 'bold', color: '#222' },
          encoding: { x, y, text: { field: 'label' }, description: { field: 'aria' } },
        },
      ],
    });
  }
  if (panels.length === 0) throw new Error('no lesson results to chart');
  const text = [
    'Each lesson\'s pool on the tour\'s workloads; the big dots are the lessons whose idea aimed at the workload.',
    ...caption(report, run, repetitionsText(used)),
  ];
  const title = 'What each idea bought, lesson by lesson';
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    description: `${title}. ${text.join(' ')}`,
    title: { text: wrap(title, layout.width - 10, 15, true), subtitle: text.flatMap((t) => wrap(t, layout.width - 10, 11.5)) },
    config: { ...config(), legend: { orient: 'top', direction: 'horizontal', labelFontSize: LABEL_SIZE,
      titleFontSize: LABEL_SIZE, titleFontWeight: 'normal', symbolStrokeWidth: 2, symbolType: 'stroke' } },
    resolve: { legend: { color: 'shared', strokeDash: 'shared' } },
    columns: layout.columns,
    concat: panels,
  };
}

// ---------------------------------------------------------------------------------------------
// Rendering.

let vegaModules = null;
async function loadVega() {
  if (!vegaModules) {
    const [vega, vl] = await Promise.all([import('vega'), import('vega-lite')]);
    // Lay text out with the font's real widths (vega's own estimate, without a canvas, is rough).
    vega.textMetrics.width = (item, text) => textWidth(text, item.fontSize || LABEL_SIZE,
      item.fontWeight === 'bold' || Number(item.fontWeight) >= 600);
    vegaModules = { vega, vl };
  }
  return vegaModules;
}

function escapeXml(s) {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

// SVG for a Vega-Lite spec, with <title> and <desc> for screen readers.
async function render(spec, title, desc) {
  const { vega, vl } = await loadVega();
  const warnings = [];
  const logger = { level() { return logger; }, info() { return logger; }, debug() { return logger; },
    warn(...m) { warnings.push(m.join(' ')); return logger; }, error(...m) { throw new Error(m.join(' ')); } };
  const compiled = vl.compile(spec, { logger }).spec;
  if (warnings.length) throw new Error(`Vega-Lite: ${warnings.join('; ')}`);
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  let svg = await view.toSVG();
  view.finalize();
  svg = svg.replace(/<svg\b[^>]*>/, (open) =>
    `${open.replace(' class="marks"', ' role="img" aria-labelledby="chart-title chart-desc"')}` +
    `<title id="chart-title">${escapeXml(title)}</title><desc id="chart-desc">${escapeXml(desc)}</desc>`);
  return `${svg}\n`;
}

// The hash of the code that draws the charts: this file and the Vega versions it uses.
function generatorHash() {
  const version = (name) => {
    try {
      return JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`), 'utf8')).version;
    } catch {
      return '?';
    }
  };
  return figures.sha256(fs.readFileSync(__filename), fs.readFileSync(path.join(__dirname, 'tour-targets.json')), `vega ${version('vega')}`, `vega-lite ${version('vega-lite')}`);
}

/** The charts a JSON file gets: [{ file, kind, layout }], file names relative to its folder. */
function chartsFor(jsonFile) {
  const base = path.basename(jsonFile, '.json');
  const out = [
    { file: `${base}.svg`, kind: 'results', layout: 'wide' },
    { file: `${base}-narrow.svg`, kind: 'results', layout: 'narrow' },
  ];
  if (base === 'tour') {
    out.push({ file: 'tour-progression.svg', kind: 'progression', layout: 'wide' },
      { file: 'tour-progression-narrow.svg', kind: 'progression', layout: 'narrow' });
  }
  return out;
}

/** Draws every chart of one JSON file into outDir; returns the files written. */
async function drawCharts(jsonFile, outDir = path.dirname(jsonFile)) {
  const text = fs.readFileSync(jsonFile);
  const report = parseReport(text.toString('utf8'));
  const run = describeRun(report, jsonFile);
  const written = [];
  fs.mkdirSync(outDir, { recursive: true });
  for (const chart of chartsFor(jsonFile)) {
    const layout = LAYOUTS[chart.layout];
    const spec = chart.kind === 'progression' ? progressionSpec(report, run, layout) : resultsSpec(report, run, layout);
    const title = chart.kind === 'progression' ? 'What each idea bought, lesson by lesson' : run.title;
    const svg = await render(spec, title, spec.description);
    const target = path.join(outDir, chart.file);
    fs.writeFileSync(target, figures.stamp(svg, {
      generator: GENERATOR, generatorSha256: generatorHash(),
      source: path.basename(jsonFile), sourceSha256: figures.sha256(text),
    }));
    written.push(target);
  }
  return written;
}

/** Problems with the charts of src/charts/ (an empty list when every chart is up to date). */
function staleCharts(chartsDir) {
  if (!fs.existsSync(chartsDir)) return [];
  const problems = [];
  const generator = generatorHash();
  const expected = new Set();
  for (const json of fs.readdirSync(chartsDir).filter((f) => f.endsWith('.json')).sort()) {
    const sourceSha256 = figures.sha256(fs.readFileSync(path.join(chartsDir, json)));
    for (const chart of chartsFor(json)) {
      expected.add(chart.file);
      for (const p of figures.staleness(path.join(chartsDir, chart.file), { sourceSha256, generatorSha256: generator })) {
        problems.push(`charts/${chart.file} ${p}`);
      }
    }
  }
  for (const svg of fs.readdirSync(chartsDir).filter((f) => f.endsWith('.svg')).sort()) {
    if (!expected.has(svg)) problems.push(`charts/${svg} has no JSON to be drawn from (its data must stay in the repository)`);
  }
  return problems;
}

async function main(argv) {
  const chartsDir = path.resolve(__dirname, '..', '..', 'src', 'charts');
  if (argv.includes('--check')) {
    const problems = staleCharts(chartsDir);
    for (const p of problems) console.error(`stale: ${p}`);
    if (problems.length) console.error('charts: redraw them with `npm run charts` (in book/) or `./workshop charts`');
    else console.log('charts: every chart is up to date with its JSON');
    return problems.length ? 1 : 0;
  }
  const outFlag = argv.indexOf('--out');
  const outDir = outFlag >= 0 ? path.resolve(argv[outFlag + 1]) : null;
  const files = argv.filter((a, i) => a.endsWith('.json') && i !== outFlag + 1);
  const inputs = files.length ? files.map((f) => path.resolve(f))
    : fs.readdirSync(chartsDir).filter((f) => f.endsWith('.json')).sort().map((f) => path.join(chartsDir, f));
  for (const json of inputs) {
    const written = await drawCharts(json, outDir || path.dirname(json));
    for (const w of written) console.log(`chart: ${path.relative(process.cwd(), w)}`);
  }
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (err) => {
    console.error(`charts: ${err.message}`);
    process.exitCode = 1;
  });
}

module.exports = {
  ORDER, PALETTE, colourOf, parseReport, readResults, describeRun, chartsFor, drawCharts, staleCharts, resultsSpec, render,
  progressionSpec, textWidth, wrap, fmt, fmtTime,
};
