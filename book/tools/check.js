#!/usr/bin/env node
'use strict';
// `npm run check`: opens the built book (book/_book) in headless Chromium and checks what a
// reader would notice. Prints one `PASS ...` or `FAIL ...` line per check, then
// `N passed, N failed`, and exits non-zero if anything failed.
//
// Usage: node tools/check.js [--screenshots DIR]   (DIR gets book-<chapter>.png for every chapter)

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');
const { serve } = require('./lib/serve');
const expected = require('./lib/expected');

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
const SEARCH_TERM = 'work-stealing';
const TIMEOUT_MS = 30_000;

const bookDir = path.resolve(__dirname, '..');
const builtDir = path.join(bookDir, '_book');
const results = { passed: 0, failed: 0 };

function report(ok, message) {
  console.log(`${ok ? 'PASS' : 'FAIL'} ${message}`);
  results[ok ? 'passed' : 'failed'] += 1;
}

// Loads a page and records its status and every JavaScript error or console error on it.
async function openPage(context, url) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(`uncaught: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
  });
  const response = await page.goto(url, { waitUntil: 'load', timeout: TIMEOUT_MS });
  await page.waitForLoadState('networkidle', { timeout: TIMEOUT_MS }).catch(() => {});
  return { page, errors, status: response ? response.status() : 0 };
}

// Everything the checks need from one rendered page, read in the browser.
function readPage(page) {
  return page.evaluate(() => {
    const content = document.querySelector('.page-inner') || document.body;
    return {
      html: document.documentElement.outerHTML,
      text: content.textContent,
      links: [...document.querySelectorAll('a[href]')].map((a) => a.href),
      ids: [...document.querySelectorAll('[id], a[name]')].map((e) => e.id || e.getAttribute('name')),
      code: [...content.querySelectorAll('pre code')].map((c) => ({
        language: ([...c.classList].find((k) => /^lang(uage)?-/.test(k)) || '').replace(/^lang(uage)?-/, ''),
        spans: c.querySelectorAll('span[class^="hljs-"], span[class*=" hljs-"]').length,
        text: c.textContent,
      })),
      sidebar: [...document.querySelectorAll('.book-summary ul.summary > li')].map((li) => ({
        header: li.classList.contains('header'),
        text: (li.querySelector(':scope > a, :scope > span') || li).textContent.trim(),
      })),
    };
  });
}

function checkCode(chapter, blocks, hljs) {
  const problems = [];
  blocks.forEach((block, i) => {
    const where = `block ${i + 1}`;
    if (!block.language) {
      problems.push(`${where} has no language (write \`\`\`cpp, \`\`\`bash, or \`\`\`text for output)`);
      return;
    }
    const expect = expected.highlightExpectation(hljs, block.language, block.text);
    if (!expect.known) problems.push(`${where}: highlight.js does not know language '${block.language}'`);
    else if (expect.spans > 0 && block.spans === 0) problems.push(`${where} (${block.language}) is not highlighted`);
  });
  const coloured = blocks.filter((b) => b.spans > 0).length;
  report(problems.length === 0,
    `code highlighted: ${chapter.page} (${blocks.length} blocks, ${coloured} with colour spans)` +
    (problems.length ? ` — ${problems.join('; ')}` : ''));
}

function checkIncludes(chapter, text) {
  const pageText = expected.normalizeSpace(text);
  for (const inc of expected.includesOf(chapter.source)) {
    const line = inc.firstLine && expected.normalizeSpace(inc.firstLine);
    const ok = Boolean(line) && pageText.includes(line);
    const shown = line && line.length > 60 ? `${line.slice(0, 57)}...` : line;
    report(ok, `included snippet shown: ${chapter.page} ${inc.directive}` +
      (ok ? ` — "${shown}"` : ` — expected to see "${line}"`));
  }
}

function checkSidebar(sidebar, chapters) {
  const wanted = [];
  let part = null;
  for (const c of chapters) {
    if (c.part !== part && c.part) wanted.push(`[part] ${c.part}`);
    part = c.part;
    if (c.depth === 0) wanted.push(c.title);
  }
  const shown = sidebar.map((e) => (e.header ? `[part] ${e.text}` : e.text));
  // Walk both lists once: each wanted entry must appear after the previous one.
  let at = 0;
  const missing = [];
  for (const w of wanted) {
    const found = shown.indexOf(w, at);
    if (found < 0) missing.push(w);
    else at = found + 1;
  }
  report(missing.length === 0,
    `sidebar lists every chapter and part of SUMMARY.md in order (${wanted.length} entries)` +
    (missing.length ? ` — missing or out of order: ${missing.join(', ')}` : ''));
}

async function checkLinks(context, pagesRead, origin) {
  const targets = new Map(); // url without fragment -> { fragments:Set, from:Set }
  for (const [from, info] of pagesRead) {
    for (const href of info.links) {
      const url = new URL(href);
      if (url.origin !== origin) continue;
      const key = url.origin + url.pathname;
      if (!targets.has(key)) targets.set(key, { fragments: new Set(), from: new Set() });
      if (url.hash.length > 1) targets.get(key).fragments.add(decodeURIComponent(url.hash.slice(1)));
      targets.get(key).from.add(from);
    }
  }
  const broken = [];
  for (const [url, { fragments, from }] of targets) {
    const response = await context.request.get(url, { timeout: TIMEOUT_MS, maxRedirects: 0 });
    const where = `${new URL(url).pathname} (linked from ${[...from].join(', ')})`;
    if (response.status() !== 200) {
      broken.push(`${where}: HTTP ${response.status()}`);
      continue;
    }
    if (fragments.size === 0) continue;
    const body = await response.text();
    for (const f of fragments) {
      if (!body.includes(`id="${f}"`) && !body.includes(`name="${f}"`)) broken.push(`${where}: no #${f} on that page`);
    }
  }
  report(broken.length === 0, `internal links: ${targets.size} distinct targets resolve with HTTP 200` +
    (broken.length ? ` — broken: ${broken.join('; ')}` : ''));
}

async function checkSearch(context, url, chapters) {
  const { page, errors } = await openPage(context, url);
  try {
    const input = page.locator('#book-search-input input');
    await input.fill(SEARCH_TERM);
    const items = page.locator('#book-search-results .search-results-item a');
    await items.first().waitFor({ timeout: TIMEOUT_MS });
    const hrefs = await items.evaluateAll((as) => as.map((a) => new URL(a.href).pathname));
    const intro = `/${chapters.find((c) => c.page).page}`;
    const found = hrefs.some((h) => h === intro || (intro.endsWith('/index.html') && h === '/'));
    report(found && errors.length === 0,
      `search for "${SEARCH_TERM}" finds ${hrefs.length} page(s), including the introduction` +
      (found ? '' : ` — results: ${hrefs.join(', ') || 'none'}`) + (errors.length ? ` — errors: ${errors.join('; ')}` : ''));
  } catch (err) {
    report(false, `search for "${SEARCH_TERM}" shows results — ${err.message.split('\n')[0]}`);
  } finally {
    await page.close();
  }
}

async function run(screenshotDir) {
  if (!fs.existsSync(path.join(builtDir, 'index.html'))) {
    report(false, `the built book exists in ${builtDir} — run \`npm run build\` first`);
    return;
  }
  if (!fs.existsSync(CHROMIUM)) {
    report(false, `Chromium is installed at ${CHROMIUM} — install Debian's package: sudo apt-get install -y chromium`);
    return;
  }
  const chapters = expected.chapters(bookDir);
  const hljs = expected.loadHighlightJs();
  const server = await serve(builtDir);
  const origin = new URL(server.url).origin;
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'book-check-chromium-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1280, height: 900 },
    });
    const pagesRead = new Map();
    let sidebar = null;
    for (const chapter of chapters.filter((c) => c.page)) {
      const url = new URL(chapter.page, server.url).href;
      let opened;
      try {
        opened = await openPage(context, url);
      } catch (err) {
        report(false, `chapter loads: ${chapter.title} (${chapter.page}) — ${err.message.split('\n')[0]}`);
        continue;
      }
      const { page, errors, status } = opened;
      report(status === 200 && errors.length === 0,
        `chapter loads: ${chapter.title} (${chapter.page}) — HTTP ${status}, ${errors.length} JavaScript error(s)` +
        (errors.length ? `: ${errors.join('; ')}` : ''));
      const info = await readPage(page);
      pagesRead.set(chapter.page, info);
      sidebar = sidebar || info.sidebar;
      report(!info.html.includes('{{#'), `no unexpanded {{#...}} directive: ${chapter.page}`);
      checkCode(chapter, info.code, hljs);
      checkIncludes(chapter, info.text);
      if (screenshotDir) {
        const file = path.join(screenshotDir, `book-${path.basename(chapter.path, '.md')}.png`);
        await page.screenshot({ path: file });
        console.log(`screenshot: ${file}`);
      }
      await page.close();
    }
    if (sidebar) checkSidebar(sidebar, chapters);
    await checkLinks(context, pagesRead, origin);
    await checkSearch(context, server.url, chapters);
  } catch (err) {
    report(false, `the browser check ran to the end — ${err.message.split('\n')[0]}`);
  } finally {
    if (context) await context.close().catch(() => {});
    await server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

async function main() {
  const flag = process.argv.indexOf('--screenshots');
  const screenshotDir = flag > 0 ? path.resolve(process.argv[flag + 1] || os.tmpdir()) : null;
  if (screenshotDir) fs.mkdirSync(screenshotDir, { recursive: true });
  await run(screenshotDir);
  console.log(`${results.passed} passed, ${results.failed} failed`);
  process.exitCode = results.failed > 0 ? 1 : 0;
}

main();
