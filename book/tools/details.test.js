'use strict';
// Unit tests for rendering Markdown inside <details> blocks (see lib/details.js).

const test = require('node:test');
const assert = require('node:assert/strict');
const { renderDetails } = require('./lib/details');

test('the body of a <details> block becomes HTML; the summary stays as written', () => {
  const source = [
    '<details>',
    '<summary>Hint 1: a title</summary>',
    '',
    'Use `notify_one()` **after** unlocking.',
    '',
    '```text',
    'lock; push; unlock; notify',
    '```',
    '',
    '</details>',
    '',
    'After the block.',
  ].join('\n');
  assert.equal(renderDetails(source), [
    '<details>',
    '<summary>Hint 1: a title</summary>',
    '<p>Use <code>notify_one()</code> <strong>after</strong> unlocking.</p>',
    '<pre><code class="language-text">lock; push; unlock; notify',
    '</code></pre>',
    '</details>',
    '',
    'After the block.',
  ].join('\n'));
});

test('text outside <details> and <details> inside a code block are left alone', () => {
  const source = ['Some `code`.', '', '```html', '<details>', '', '*x*', '', '</details>', '```'].join('\n');
  assert.equal(renderDetails(source), source);
});

test('an unclosed <details> is left alone', () => {
  const source = ['<details>', '', '*x*'].join('\n');
  assert.equal(renderDetails(source), source);
});
