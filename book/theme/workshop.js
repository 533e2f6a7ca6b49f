// Reader comforts for the guide (book.toml: output.html.additional-js), loaded on every page.
//  - The build (tools/lib/postprocess.js) puts a "Copy" button beside every listing; this makes
//    it copy the listing's text. One listener on the document serves every page, including the
//    pages HonKit's theme swaps in without reloading.
//  - The search splits a query the way the build split the book (tools/lib/search.js,
//    tokenize()): `work-stealing` and `std::atomic` whole and in parts.
//  - A link to a section (a search result, a heading link) opens with that section in view.
(function () {
  'use strict';

  // The same rule as tools/lib/search.js tokenize().
  function tokenize(text) {
    var out = [];
    String(text).toLowerCase().split(/[^a-z0-9_+#:.\-]+/).forEach(function (raw) {
      var word = raw.replace(/^[-:.]+|[-:.]+$/g, '');
      if (!word) return;
      out.push(word);
      if (/::|[.-]/.test(word)) {
        word.split(/::|[.-]+/).forEach(function (part) {
          if (part) out.push(part);
        });
      }
    });
    return out;
  }
  if (window.lunr) {
    window.lunr.tokenizer = function (obj) {
      if (obj === null || obj === undefined) return [];
      if (Array.isArray(obj)) return obj.map(function (t) { return String(t).toLowerCase(); });
      return tokenize(obj);
    };
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    // file:// and plain http: a hidden textarea and the old copy command.
    return new Promise(function (resolve, reject) {
      var area = document.createElement('textarea');
      area.value = text;
      area.setAttribute('readonly', '');
      area.style.position = 'fixed';
      area.style.opacity = '0';
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try {
        ok = document.execCommand('copy');
      } catch (e) {
        ok = false;
      }
      document.body.removeChild(area);
      if (ok) resolve();
      else reject(new Error('copy refused'));
    });
  }

  document.addEventListener('click', function (event) {
    var button = event.target.closest ? event.target.closest('.copy-button') : null;
    if (!button) return;
    var code = button.parentNode.querySelector('pre code') || button.parentNode.querySelector('pre');
    if (!code) return;
    copyText(code.textContent.replace(/\n$/, '')).then(function () {
      button.textContent = 'Copied';
      button.classList.add('copied');
      setTimeout(function () {
        button.textContent = 'Copy';
        button.classList.remove('copied');
      }, 1500);
    }, function () {
      button.textContent = 'Press Ctrl+C';
    });
  });
})();
