// columns.js — where on its line a warning's token is written, for compiler-style
// diagnostics (`werkbaum check`: file:line:col). The warnings name what they found
// (a status code, an id, a size); this finds it as written: a status box `[z]`, a
// dependency `:#id` or `,#id`, an id `#id` that is not the start of a longer one, a
// size `(M)` in any case (the last one counts). Anything else: the line's first
// character after its indentation. A token on a continuation line of the
// warning's logical line is found there: `columnLine` names that line.

import * as parser from './parser.js';

const ID_CHAR = /^[\p{L}\p{N}._-]$/u;

// The line a diagnostic of `w` points at: a mixed gate at the sibling that differs.
export function diagnosticLine(w) {
  return w.type === 'mixedGate' && typeof w.siblingLine === 'number' ? w.siblingLine : w.line;
}

// The 1-based column, in characters (code points), of `w`'s token on
// `lineText`, or -1 when the token is not written there.
function tokenColumn(w, lineText) {
  const caseBlind = w.type === 'sizeConflict';
  for (const [token, offset] of tokensOf(w)) {
    const at = caseBlind ? lineText.toLowerCase().lastIndexOf(token.toLowerCase()) : findWhole(lineText, token);
    if (at >= 0) return codePoints(lineText, at) + offset + 1;
  }
  return -1;
}

// The column of `w`'s token on `lineText`, else of its first character after the indentation.
export function columnOf(w, lineText) {
  const at = tokenColumn(w, lineText);
  if (at > 0) return at;
  const indent = /^[ \t]*/.exec(lineText)[0].length;
  return codePoints(lineText, indent) + 1;
}

// `warnings` (as the facade shapes them) with `column` where their line is in
// `text`, and `columnLine` where the token sits on a continuation line.
export function withColumns(warnings, text) {
  const lines = text.split('\n');
  let conts = null;
  const continuations = (line) => {
    if (!conts) {
      conts = new Map();
      for (const rec of parser.logicalLines(text)) if (rec.cont.length) conts.set(rec.line, rec.cont);
    }
    return conts.get(line) || [];
  };
  return warnings.map((w) => {
    const line = diagnosticLine(w);
    if (typeof line !== 'number' || line < 1 || line > lines.length) return w;
    if (tokenColumn(w, lines[line - 1]) < 0) {
      for (const cont of continuations(line)) {
        const at = tokenColumn(w, lines[cont - 1]);
        if (at > 0) return Object.assign({}, w, { column: at, columnLine: cont });
      }
    }
    return Object.assign({}, w, { column: columnOf(w, lines[line - 1]) });
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

function findWhole(text, token) {
  let start = text.indexOf(token);
  while (start >= 0) {
    const after = String.fromCodePoint(text.codePointAt(start + token.length) || 0);
    if (start + token.length >= text.length || !ID_CHAR.test(after)) return start;
    start = text.indexOf(token, start + 1);
  }
  return -1;
}

function codePoints(text, end) {
  let count = 0;
  for (let i = 0; i < end; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xdc00 || unit > 0xdfff) count++;
  }
  return count;
}
