#!/usr/bin/env node
'use strict';
// `npm run check`: opens the built book (book/_book) in headless Chromium and checks what a
// reader would notice. Prints one `PASS ...` or `FAIL ...` line per check, then
// `N passed, N failed`, and exits non-zero if anything failed.
//
// Every chapter is read at 1280 px and again at 400 px (a phone): nothing may stick out of the
// column or scroll sideways (at 400 px code may scroll), every chart and diagram loads, has alt
// text and stays readable, headings link to themselves, listings have a copy button, callouts
// are styled, and the chapter links name their chapters. Then the search (a code identifier
// lands on its section) and the copy button (the clipboard gets the listing).
//
// Usage: node tools/check.js [--screenshots DIR]
//   DIR gets, for every chapter, <chapter>-1280.png and <chapter>-400.png (the top of the page)
//   and pictures of each of its figures and of its first table, callout and listing, at both widths.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');
const { serve } = require('./lib/serve');
const expected = require('./lib/expected');
const checks = require('./lib/page-checks');

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
const SEARCH_TERM = 'work-stealing';
// A code identifier a reader would search for, and the chapter (and section) it must lead to.
const CODE_SEARCH = { term: 'memory_order_acquire', page: 'lesson-04-chase-lev.html' };
const WIDE = { width: 1280, height: 900 };
const PHONE = { width: 400, height: 860 };
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
      `search for "${SEARCH_TERM}" finds ${hrefs.length} section(s), including the introduction` +
      (found ? '' : ` — results: ${hrefs.join(', ') || 'none'}`) + (errors.length ? ` — errors: ${errors.join('; ')}` : ''));
  } catch (err) {
    report(false, `search for "${SEARCH_TERM}" shows results — ${err.message.split('\n')[0]}`);
  } finally {
    await page.close();
  }
}

// Headings, copy buttons, callouts and chapter links of one chapter (read at 1280 px).
function checkFeatures(chapter, f, chapters) {
  const unlinked = f.headings.filter((h) => !h.linked).map((h) => `#${h.id}`);
  report(f.headings.length > 0 && unlinked.length === 0,
    `headings link to themselves: ${chapter.page} (${f.headings.length} headings)` +
    (unlinked.length ? ` — not linked: ${unlinked.join(', ')}` : ''));
  report(f.buttons === f.listings, `every listing has a copy button: ${chapter.page} (${f.buttons} of ${f.listings})`);
  report(f.unstyled === 0, `callouts styled: ${chapter.page} (${f.callouts} callouts` +
    (f.unstyled ? `, ${f.unstyled} blockquote(s) opening with Note/Tip/Warning/Common bug left plain)` : ')'));
  const pages = chapters.filter((c) => c.page);
  const at = pages.findIndex((c) => c.page === chapter.page);
  const want = { prev: at > 0 ? pages[at - 1].title : null, next: at < pages.length - 1 ? pages[at + 1].title : null };
  const ok = (f.prev || null) === want.prev && (f.next || null) === want.next;
  report(ok, `chapter links name their chapters: ${chapter.page} (previous: ${f.prev || 'none'}; next: ${f.next || 'none'})` +
    (ok ? '' : ` — expected previous: ${want.prev || 'none'}, next: ${want.next || 'none'}`));
}

// Nothing sticks out of the column at this width, and the figures load and stay readable.
async function checkLayout(page, chapter, size, figures) {
  const phone = size.width < 600;
  const { problems, column } = await page.evaluate(checks.layoutInPage, phone);
  report(problems.length === 0,
    `layout at ${size.width} px: ${chapter.page} (column ${column} px; nothing sticks out${phone ? ', only code scrolls' : ' or scrolls'})` +
    (problems.length ? ` — ${problems.slice(0, 6).join('; ')}${problems.length > 6 ? `; and ${problems.length - 6} more` : ''}` : ''));
  const { images } = await page.evaluate(checks.featuresInPage);
  const judged = checks.judgeImages(images, builtDir, phone);
  for (const img of images) {
    if (/(^|\/)charts\//.test(img.src)) figures.charts.add(img.src);
    if (/(^|\/)diagrams\//.test(img.src)) figures.diagrams.add(img.src);
  }
  if (images.length > 0) {
    report(judged.problems.length === 0,
      `figures at ${size.width} px: ${chapter.page} (${images.length} image(s): ${judged.charts} chart(s), ${judged.diagrams} diagram(s); ` +
      'alt text, loaded, readable)' + (judged.problems.length ? ` — ${judged.problems.join('; ')}` : ''));
  }
}

// Every chart and diagram the book has is shown somewhere, and they are accessible SVG.
function checkFigureTotals(figures) {
  const srcDir = path.join(bookDir, 'src');
  const unshown = [];
  const drawn = { charts: 0, diagrams: 0 };
  for (const kind of ['charts', 'diagrams']) {
    const dir = path.join(srcDir, kind);
    if (!fs.existsSync(dir)) continue;
    const shown = new Set([...figures[kind]].map((s) => path.basename(s)));
    for (const svg of fs.readdirSync(dir).filter((f) => f.endsWith('.svg') && !f.endsWith('-narrow.svg'))) {
      drawn[kind]++;
      if (kind === 'diagrams' && !shown.has(svg)) unshown.push(`${kind}/${svg}`);
    }
  }
  report(drawn.diagrams > 0 && unshown.length === 0,
    `every diagram is shown in a chapter (${drawn.diagrams} diagrams drawn from src/diagrams/*.dot; ` +
    `${figures.charts.size} charts shown)` + (unshown.length ? ` — not shown anywhere: ${unshown.join(', ')}` : ''));
}

// Pictures to look at: the top of the chapter, and its first figure, wide table, callout and listing.
async function screenshots(page, chapter, size, dir) {
  const name = path.basename(chapter.path, '.md');
  const shots = [[`${name}-${size.width}.png`, null, 0]];
  const figureCount = await page.locator('.markdown-section figure').count();
  for (let i = 0; i < figureCount; i++) shots.push([`${name}-${size.width}-figure${i + 1}.png`, '.markdown-section figure', i]);
  for (const [what, sel] of [['table', '.markdown-section table'], ['callout', '.markdown-section blockquote.callout'],
    ['listing', '.markdown-section .listing']]) {
    shots.push([`${name}-${size.width}-${what}.png`, sel, 0]);
  }
  for (const [file, sel, nth] of shots) {
    const target = path.join(dir, file);
    if (sel) {
      const el = page.locator(sel).nth(nth);
      if ((await el.count()) === 0) continue;
      await el.evaluate((e) => e.scrollIntoView({ block: 'start' }));
      await page.waitForTimeout(100);
    }
    await page.screenshot({ path: target });
    console.log(`screenshot: ${target}`);
  }
}

// Searching for a code identifier finds its chapter, and the result opens the matching section.
async function checkCodeSearch(context, url) {
  const { term, page: wanted } = CODE_SEARCH;
  const { page, errors } = await openPage(context, url);
  try {
    await page.locator('#book-search-input input').fill(term);
    const items = page.locator('#book-search-results .search-results-item a');
    await items.first().waitFor({ timeout: TIMEOUT_MS });
    const hrefs = await items.evaluateAll((as) => as.map((a) => a.href));
    const hit = hrefs.find((h) => new URL(h).pathname === `/${wanted}` && new URL(h).hash.length > 1);
    if (!hit) {
      report(false, `search for "${term}" finds a section of ${wanted} — results: ${hrefs.map((h) => new URL(h).pathname + new URL(h).hash).join(', ') || 'none'}`);
      return;
    }
    const id = decodeURIComponent(new URL(hit).hash.slice(1));
    await page.locator(`#book-search-results a[href$="${new URL(hit).pathname.slice(1)}${new URL(hit).hash}"]`).first().click();
    await page.waitForFunction((p) => window.location.pathname.endsWith(p), `/${wanted}`, { timeout: TIMEOUT_MS });
    const heading = page.locator(`[id="${id}"]`);
    await heading.waitFor({ timeout: TIMEOUT_MS });
    // The theme scrolls to the section once the page is in: wait for the heading to come into view.
    const inView = await page.waitForFunction((target) => {
      const r = document.getElementById(target).getBoundingClientRect();
      return r.top >= 0 && r.top < window.innerHeight;
    }, id, { timeout: 5000 }).then(() => true, () => false);
    const top = await heading.evaluate((el) => el.getBoundingClientRect().top);
    report(inView && errors.length === 0,
      `search for "${term}" finds ${hrefs.length} section(s); clicking the one in ${wanted} opens it at #${id}` +
      (inView ? '' : ` — the section's heading is at ${Math.round(top)} px, not in view`) +
      (errors.length ? ` — errors: ${errors.join('; ')}` : ''));
  } catch (err) {
    report(false, `search for "${term}" lands on its section — ${err.message.split('\n')[0]}`);
  } finally {
    await page.close();
  }
}

// The copy button puts the listing's text on the clipboard.
async function checkCopyButton(context, url) {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(url).origin });
  const { page, errors } = await openPage(context, url);
  try {
    const listing = page.locator('.markdown-section .listing').first();
    await listing.hover();
    await listing.locator('.copy-button').click();
    await page.waitForFunction(() => document.querySelector('.copy-button.copied'), null, { timeout: 5000 });
    const [copied, code] = await Promise.all([
      page.evaluate(() => navigator.clipboard.readText()),
      listing.locator('pre code').evaluate((c) => c.textContent.replace(/\n$/, '')),
    ]);
    report(copied === code && errors.length === 0,
      `the copy button copies its listing (${code.split('\n').length} lines from ${new URL(url).pathname})` +
      (copied === code ? '' : ` — the clipboard has ${JSON.stringify(copied.slice(0, 60))}`) +
      (errors.length ? ` — errors: ${errors.join('; ')}` : ''));
  } catch (err) {
    report(false, `the copy button copies its listing — ${err.message.split('\n')[0]}`);
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
    const figures = { charts: new Set(), diagrams: new Set() };
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
      const features = await page.evaluate(checks.featuresInPage);
      checkFeatures(chapter, features, chapters);
      await checkLayout(page, chapter, WIDE, figures);
      if (screenshotDir) await screenshots(page, chapter, WIDE, screenshotDir);
      await page.close();
    }
    for (const chapter of chapters.filter((c) => c.page)) {
      const page = await context.newPage();
      try {
        await page.setViewportSize(PHONE);
        await page.goto(new URL(chapter.page, server.url).href, { waitUntil: 'load', timeout: TIMEOUT_MS });
        await page.waitForLoadState('networkidle', { timeout: TIMEOUT_MS }).catch(() => {});
        await checkLayout(page, chapter, PHONE, figures);
        if (screenshotDir) await screenshots(page, chapter, PHONE, screenshotDir);
      } catch (err) {
        report(false, `layout at ${PHONE.width} px: ${chapter.page} — ${err.message.split('\n')[0]}`);
      } finally {
        await page.close();
      }
    }
    checkFigureTotals(figures);
    if (sidebar) checkSidebar(sidebar, chapters);
    await checkLinks(context, pagesRead, origin);
    await checkSearch(context, server.url, chapters);
    await checkCodeSearch(context, server.url);
    await checkCopyButton(context, new URL(CODE_SEARCH.page, server.url).href);
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
