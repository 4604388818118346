// columns.js — where on its line a warning's token is written, for compiler-style
// diagnostics (`werkbaum check`: file:line:col). The warnings name what they found
// (a status code, an id, a size); this finds it as written: a status box `[z]`, a
// dependency `:#id` or `,#id`, an id `#id` that is not the start of a longer one, a
// size `(M)` in any case (the last one counts). Anything else: the line's first
// character after its indentation. A token on a continuation line of the
// warning's logical line is found there: `columnLine` names that line.
//
// One line can carry thousands of warnings (a dependency list of unknown ids), and
// one logical line thousands of continuation lines. So each physical line is
// indexed once, on first use: where every `#id`, `:#id` and `,#id` is first written
// whole, and where its low surrogates sit (to count code points); each logical
// line remembers on which continuation line each of those tokens first occurs.
// A warning then costs a few lookups, not a scan from the line's start.

import * as parser from './parser.js';

const ID_CHAR = /^[\p{L}\p{N}._-]$/u;

// The line a diagnostic of `w` points at: a mixed gate at the sibling that differs.
export function diagnosticLine(w) {
  return w.type === 'mixedGate' && typeof w.siblingLine === 'number' ? w.siblingLine : w.line;
}

// The 1-based column, in characters (code points), of `w`'s token on the
// indexed line `ix`, or -1 when the token is not written there.
function tokenColumn(w, ix) {
  const caseBlind = w.type === 'sizeConflict';
  for (const [token, offset] of tokensOf(w)) {
    const at = caseBlind ? ix.text.toLowerCase().lastIndexOf(token.toLowerCase()) : ix.find(token);
    if (at >= 0) return ix.codePoints(at) + offset + 1;
  }
  return -1;
}

// The column of `w`'s token on the indexed line `ix`, else of its first character
// after the indentation.
function columnIn(w, ix) {
  const at = tokenColumn(w, ix);
  if (at > 0) return at;
  const indent = /^[ \t]*/.exec(ix.text)[0].length;
  return ix.codePoints(indent) + 1;
}

// The column of `w`'s token on `lineText`, else of its first character after the indentation.
export function columnOf(w, lineText) {
  return columnIn(w, indexLine(lineText));
}

// `warnings` (as the facade shapes them) with `column` where their line is in
// `text`, and `columnLine` where the token sits on a continuation line.
export function withColumns(warnings, text) {
  const lines = text.split('\n');
  const indexed = new Map(); // line number -> indexLine()
  const lineIndex = (n) => {
    let ix = indexed.get(n);
    if (!ix) { ix = indexLine(lines[n - 1]); indexed.set(n, ix); }
    return ix;
  };
  let conts = null;
  const continuations = (line) => {
    if (!conts) {
      conts = new Map();
      for (const rec of parser.logicalLines(text)) if (rec.cont.length) conts.set(rec.line, rec.cont);
    }
    return conts.get(line) || [];
  };
  const chains = new Map(); // first line -> Map(token -> first continuation line holding it whole)
  const chainOf = (line) => {
    let firstOn = chains.get(line);
    if (!firstOn) {
      firstOn = new Map();
      for (const cont of continuations(line)) {
        for (const token of lineIndex(cont).tokens()) if (!firstOn.has(token)) firstOn.set(token, cont);
      }
      chains.set(line, firstOn);
    }
    return firstOn;
  };
  // The first continuation line of `line` on which one of `w`'s tokens is written, or 0.
  const contHolding = (w, line) => {
    const tokens = tokensOf(w);
    if (tokens.length === 0) return 0;
    if (w.type !== 'sizeConflict' && tokens.every(([token]) => isIndexed(token))) {
      const firstOn = chainOf(line);
      let best = 0;
      for (const [token] of tokens) {
        const cont = firstOn.get(token);
        if (cont !== undefined && (best === 0 || cont < best)) best = cont;
      }
      return best;
    }
    for (const cont of continuations(line)) if (tokenColumn(w, lineIndex(cont)) > 0) return cont;
    return 0;
  };
  return warnings.map((w) => {
    const line = diagnosticLine(w);
    if (typeof line !== 'number' || line < 1 || line > lines.length) return w;
    if (tokenColumn(w, lineIndex(line)) < 0) {
      const cont = contHolding(w, line);
      if (cont > 0) return Object.assign({}, w, { column: tokenColumn(w, lineIndex(cont)), columnLine: cont });
    }
    return Object.assign({}, w, { column: columnIn(w, lineIndex(line)) });
  });
}

function tokensOf(w) {
  const field = (name) => (w[name] == null ? '' : String(w[name]));
  switch (w.type) {
    case 'unknownStatus': return [['[' + field('code') + ']', 0]];
    case 'unknownDep': return [[':#' + field('id'), 0], [',#' + field('id'), 1]];
    case 'duplicateId':
    case 'unknownDesc': return [['#' + field('id'), 0]];
    case 'sizeConflict': return [['(' + field('size') + ')', 0]];
    default: return [];
  }
}

const ID_RUN = /[\p{L}\p{N}._-]*/uy;
const INDEXED = /^[:,]?#[\p{L}\p{N}._-]*$/u;

// Whether `token` is `#id`, `:#id` or `,#id` with an id of id characters only: the
// tokens indexLine() records. Its whole occurrences are exactly the places where
// the id-character run after a `#` equals the id.
function isIndexed(token) {
  return INDEXED.test(token);
}

// One line, read once: the first whole occurrence of every `#id`, `:#id` and
// `,#id` token, and the code point count before any position.
function indexLine(text) {
  const first = new Map();
  const note = (token, at) => { if (!first.has(token)) first.set(token, at); };
  for (let p = text.indexOf('#'); p >= 0; p = text.indexOf('#', p + 1)) {
    ID_RUN.lastIndex = p + 1;
    const token = '#' + ID_RUN.exec(text)[0];
    note(token, p);
    const before = p > 0 ? text[p - 1] : '';
    if (before === ':' || before === ',') note(before + token, p - 1);
  }
  let lows = null; // positions of the UTF-16 units that do not start a code point, ascending
  return {
    text,
    tokens: () => first.keys(),
    find: (token) => {
      if (!isIndexed(token)) return findWhole(text, token);
      const at = first.get(token);
      return at === undefined ? -1 : at;
    },
    // Characters (code points) before UTF-16 index `end`.
    codePoints: (end) => {
      if (!lows) {
        lows = [];
        for (let i = 0; i < text.length; i++) {
          const unit = text.charCodeAt(i);
          if (unit >= 0xdc00 && unit <= 0xdfff) lows.push(i);
        }
      }
      let lo = 0;
      let hi = lows.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (lows[mid] < end) lo = mid + 1; else hi = mid;
      }
      return end - lo;
    },
  };
}

function findWhole(text, token) {
  let start = text.indexOf(token);
  while (start >= 0) {
    const after = String.fromCodePoint(text.codePointAt(start + token.length) || 0);
    if (start + token.length >= text.length || !ID_CHAR.test(after)) return start;
    start = text.indexOf(token, start + 1);
  }
  return -1;
}
