'use strict';
// Unit tests for the {{#include}} expansion (node --test book/tools/).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { expandIncludes, IncludeError } = require('./lib/include');

// A scratch book: chapter.md in src/, the included code two folders away, as in the workshop.
function scratch() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'book-include-test-'));
  fs.mkdirSync(path.join(root, 'book', 'src'), { recursive: true });
  fs.mkdirSync(path.join(root, 'solutions'), { recursive: true });
  fs.writeFileSync(path.join(root, 'solutions', 'pool.cpp'), [
    '#include "pool.hpp"',                 // 1
    '// ANCHOR: spawn',                    // 2
    'void spawn() {',                      // 3
    '    // ANCHOR: lock',                 // 4
    '    lock();',                         // 5
    '    // ANCHOR_END: lock',             // 6
    '    push();',                         // 7
    '}',                                   // 8
    '// ANCHOR_END: spawn',                // 9
    'void wait() {}',                      // 10
    '',
  ].join('\n'));
  const chapter = path.join(root, 'book', 'src', 'chapter.md');
  return { root, chapter };
}

function expand(directive) {
  const { root, chapter } = scratch();
  try {
    return expandIncludes(directive, chapter, 'src/chapter.md');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

test('whole-file include drops every anchor line', () => {
  assert.equal(expand('{{#include ../../solutions/pool.cpp}}'),
    ['#include "pool.hpp"', 'void spawn() {', '    lock();', '    push();', '}', 'void wait() {}'].join('\n'));
});

test('anchor include keeps the region and drops nested anchor lines', () => {
  assert.equal(expand('{{#include ../../solutions/pool.cpp:spawn}}'),
    ['void spawn() {', '    lock();', '    push();', '}'].join('\n'));
});

test('a nested anchor can be included on its own', () => {
  assert.equal(expand('{{#include ../../solutions/pool.cpp:lock}}'), '    lock();');
});

test('text around the directive is kept', () => {
  assert.equal(expand('```cpp\n{{#include ../../solutions/pool.cpp:lock}}\n```'), '```cpp\n    lock();\n```');
});

test('line range :N is one line', () => {
  assert.equal(expand('{{#include ../../solutions/pool.cpp:3}}'), 'void spawn() {');
});

test('line range :N:M is lines N to M, without anchor lines', () => {
  assert.equal(expand('{{#include ../../solutions/pool.cpp:3:5}}'), 'void spawn() {\n    lock();');
});

test('line range ::M is lines 1 to M', () => {
  assert.equal(expand('{{#include ../../solutions/pool.cpp::3}}'), '#include "pool.hpp"\nvoid spawn() {');
});

test('line range :N: is line N to the end', () => {
  assert.equal(expand('{{#include ../../solutions/pool.cpp:8:}}'), '}\nvoid wait() {}');
});

test('an escaped directive is kept literally, without the backslash', () => {
  assert.equal(expand('\\{{#include missing.cpp}}'), '{{#include missing.cpp}}');
});

test('a missing file fails, naming the chapter and the path', () => {
  assert.throws(() => expand('{{#include ../../solutions/nope.cpp:spawn}}'), (err) => {
    assert.ok(err instanceof IncludeError);
    assert.match(err.message, /^src\/chapter\.md: /);
    assert.match(err.message, /\.\.\/\.\.\/solutions\/nope\.cpp/);
    assert.match(err.message, /ENOENT/);
    return true;
  });
});

test('a missing anchor fails, naming the chapter, the file and the anchor', () => {
  assert.throws(() => expand('{{#include ../../solutions/pool.cpp:worker_loop}}'), (err) => {
    assert.ok(err instanceof IncludeError);
    assert.match(err.message, /^src\/chapter\.md: /);
    assert.match(err.message, /solutions\/pool\.cpp:worker_loop/);
    assert.match(err.message, /anchor 'worker_loop' not found/);
    return true;
  });
});

test('an anchor name must match exactly, not as a prefix', () => {
  assert.throws(() => expand('{{#include ../../solutions/pool.cpp:spa}}'), /anchor 'spa' not found/);
});

test('an anchor without its end fails', () => {
  const { root, chapter } = scratch();
  try {
    fs.writeFileSync(path.join(root, 'solutions', 'open.cpp'), '// ANCHOR: open\nint x;\n');
    assert.throws(() => expandIncludes('{{#include ../../solutions/open.cpp:open}}', chapter, 'c.md'),
      /anchor 'open' has no matching "ANCHOR_END: open"/);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a line range past the end of the file fails', () => {
  assert.throws(() => expand('{{#include ../../solutions/pool.cpp:40:50}}'), /past the end/);
});

test('an unsupported directive fails instead of being left in the page', () => {
  assert.throws(() => expand('{{#playground ../../solutions/pool.cpp}}'), /unsupported directive '#playground'/);
});

test('included Markdown is expanded too, relative to its own folder', () => {
  const { root, chapter } = scratch();
  try {
    fs.writeFileSync(path.join(root, 'solutions', 'part.md'), 'Code:\n{{#include pool.cpp:lock}}\n');
    assert.equal(expandIncludes('{{#include ../../solutions/part.md}}', chapter, 'c.md'), 'Code:\n    lock();');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
