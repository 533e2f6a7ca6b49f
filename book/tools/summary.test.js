'use strict';
// Unit tests for reading mdBook's SUMMARY.md and rewriting it for HonKit.

const test = require('node:test');
const assert = require('node:assert/strict');
const { parseSummary, toHonkitSummary } = require('./lib/summary');

const SUMMARY = `# Summary

[Introduction](introduction.md)

# Lessons

- [Lesson 00](lesson-00.md)
    - [Details](lesson-00-details.md)
- [Lesson 99]()

---

# Appendices

- [Further reading](further-reading.md)
`;

test('chapters come out in order with their part; drafts have no path', () => {
  const chapters = parseSummary(SUMMARY).map((c) => [c.title, c.path, c.part, c.draft]);
  assert.deepEqual(chapters, [
    ['Introduction', 'introduction.md', null, false],
    ['Lesson 00', 'lesson-00.md', 'Lessons', false],
    ['Details', 'lesson-00-details.md', 'Lessons', false],
    ['Lesson 99', null, 'Lessons', true],
    ['Further reading', 'further-reading.md', 'Appendices', false],
  ]);
});

test('the HonKit summary has h2 parts, list items only, and no title or separator', () => {
  assert.equal(toHonkitSummary(SUMMARY), `
- [Introduction](introduction.md)

## Lessons

- [Lesson 00](lesson-00.md)
    - [Details](lesson-00-details.md)
- Lesson 99


## Appendices

- [Further reading](further-reading.md)
`);
});
