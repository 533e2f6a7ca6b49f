#!/usr/bin/env node
'use strict';
// `npm run serve [-- PORT]`: serves the built book (book/_book) on 127.0.0.1 until Ctrl-C.
// `./workshop book` builds the book and then runs this. PORT defaults to 3000; 0 picks a free one.

const fs = require('node:fs');
const path = require('node:path');
const { serve } = require('./lib/serve');

const builtDir = path.resolve(__dirname, '..', '_book');
const port = Number(process.argv[2] ?? 3000);

if (!fs.existsSync(path.join(builtDir, 'index.html'))) {
  console.error(`serve: ${builtDir} has no book yet; run \`npm run build\` first`);
  process.exit(1);
}
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`serve: '${process.argv[2]}' is not a port number`);
  process.exit(2);
}
serve(builtDir, port).then(
  (server) => {
    console.log(`serving the book at ${server.url} (Ctrl-C stops)`);
    const stop = () => server.close().then(() => process.exit(0));
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  },
  (err) => {
    console.error(`serve: cannot listen on 127.0.0.1:${port}: ${err.code || err.message}`);
    process.exit(1);
  },
);
