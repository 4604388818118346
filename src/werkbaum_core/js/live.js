// Line-operation model of live editing (documents-api.md §3, notation.md §25).
//
// Everything here works on arrays of lines. The server, the browser client and
// this module must agree to the character on these rules: conflict decisions
// and the exact `opsSinceBase` values depend on them.

// Above this many LCS cells the diff gives up and emits one replace (§3.4).
const MAX_LCS_CELLS = 1000000;

// ---------------------------------------------------------------------------
// §3.1: text <-> lines

export function normalize(t) {
  return String(t).replace(/\r\n/g, '\n').replace(/\r/g, '\n');
}

// No special case for a trailing newline: 'a\n' -> ['a', ''], '' -> [''].
export function lines(t) {
  return normalize(t).split('\n');
}

export function text(ls) {
  return ls.join('\n');
}

// ---------------------------------------------------------------------------
// §3.2: operations

function insertOp(index, ls) {
  return { op: 'insert', index, lines: ls };
}

function deleteOp(index, count) {
  return { op: 'delete', index, count };
}

function replaceOp(index, count, ls) {
  return { op: 'replace', index, count, lines: ls };
}

// Lines removed from the base: an insert removes none, whatever its count says.
function removedOf(op) {
  return op.op === 'insert' ? 0 : op.count;
}

function endOf(op) {
  return op.index + removedOf(op);
}

// Lines put in; a replace without `lines` inserts none, and so (leniently) does an insert.
function insertedOf(op) {
  return op.op === 'delete' || op.lines == null ? [] : op.lines;
}

function lineDelta(op) {
  return insertedOf(op).length - removedOf(op);
}

// ---------------------------------------------------------------------------
// §3.4: computeOps

function commonPrefix(a, b) {
  const limit = Math.min(a.length, b.length);
  let k = 0;
  while (k < limit && a[k] === b[k]) k++;
  return k;
}

// The suffix may not reach into the prefix of the shorter list.
function commonSuffix(a, b, head) {
  const limit = Math.min(a.length, b.length) - head;
  let k = 0;
  while (k < limit && a[a.length - 1 - k] === b[b.length - 1 - k]) k++;
  return k;
}

// Suffix LCS table, flat: cell (i, j) at i * (m + 1) + j holds the LCS length
// of a[i:] and b[j:]. Row n and column m stay 0. A typed array keeps a
// million cells at a few MB and avoids a million small JS arrays.
function suffixLcsTable(a, b) {
  const n = a.length;
  const m = b.length;
  const w = m + 1;
  const table = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    const row = i * w;
    const below = row + w;
    const ai = a[i];
    for (let j = m - 1; j >= 0; j--) {
      if (ai === b[j]) table[row + j] = table[below + j + 1] + 1;
      else {
        const right = table[row + j + 1];
        const down = table[below + j];
        table[row + j] = right >= down ? right : down;
      }
    }
  }
  return table;
}

function hunkOp(index, removed, ins) {
  if (removed > 0 && ins.length > 0) return replaceOp(index, removed, ins);
  if (removed > 0) return deleteOp(index, removed);
  return insertOp(index, ins);
}

// Walk the table; a hunk runs from the first mismatch to the next matching pair.
function walkLcs(a, b, table, head) {
  const n = a.length;
  const m = b.length;
  const w = m + 1;
  const ops = [];
  let i = 0;
  let j = 0;
  const matches = () => i < n && j < m && a[i] === b[j];
  while (i < n || j < m) {
    if (matches()) {
      i++;
      j++;
      continue;
    }
    const start = i;
    const ins = [];
    while ((i < n || j < m) && !matches()) {
      // Ties prefer taking the insertion (§3.4 step 6).
      if (j < m && (i === n || table[i * w + j + 1] >= table[(i + 1) * w + j])) ins.push(b[j++]);
      else i++;
    }
    ops.push(hunkOp(head + start, i - start, ins));
  }
  return ops;
}

export function computeOps(from, to) {
  const head = commonPrefix(from, to);
  const tail = commonSuffix(from, to, head);
  const a = from.slice(head, from.length - tail);
  const b = to.slice(head, to.length - tail);
  if (a.length === 0 && b.length === 0) return [];
  if (a.length === 0) return [insertOp(head, b)];
  if (b.length === 0) return [deleteOp(head, a.length)];
  if (a.length * b.length > MAX_LCS_CELLS) return [replaceOp(head, a.length, b)];
  return walkLcs(a, b, suffixLcsTable(a, b), head);
}

// ---------------------------------------------------------------------------
// §3.3: validation and application

function isInt(v) {
  return typeof v === 'number' && Number.isInteger(v);
}

function describe(op, k) {
  return `op ${k} (${op && typeof op === 'object' ? JSON.stringify(op) : String(op)})`;
}

// The shape check the server's schema mapping does (400 there), then §3.3.
function checkShape(op, k) {
  if (op === null || typeof op !== 'object') throw new Error(`invalid_argument: ${describe(op, k)} is not an object`);
  if (op.op !== 'insert' && op.op !== 'delete' && op.op !== 'replace') {
    throw new Error(`invalid_argument: ${describe(op, k)} has an unknown kind; use insert, delete or replace`);
  }
  if (!isInt(op.index)) throw new Error(`invalid_argument: ${describe(op, k)} needs an integer index`);
  if (op.op !== 'insert' && !isInt(op.count)) {
    throw new Error(`invalid_argument: ${describe(op, k)} needs an integer count`);
  }
  const ls = op.op === 'delete' ? null : op.lines;
  if (ls != null && (!Array.isArray(ls) || ls.some((l) => typeof l !== 'string'))) {
    throw new Error(`invalid_argument: ${describe(op, k)} needs lines as a list of strings`);
  }
}

function validateOps(size, ops) {
  if (!Array.isArray(ops)) throw new Error('invalid_argument: ops must be a list');
  let prevEnd = 0;
  ops.forEach((op, k) => {
    checkShape(op, k);
    const removed = removedOf(op);
    if (removed < 0) throw new Error(`invalid_argument: ${describe(op, k)} has a negative count`);
    if (op.index < 0 || op.index > size) {
      throw new Error(`invalid_argument: ${describe(op, k)} index is outside the ${size} base lines`);
    }
    if (endOf(op) > size) {
      throw new Error(`invalid_argument: ${describe(op, k)} reaches past the ${size} base lines`);
    }
    if (op.index < prevEnd) {
      throw new Error(`invalid_argument: ${describe(op, k)} is not ascending or overlaps the previous op`);
    }
    prevEnd = endOf(op);
  });
}

export function applyOps(base, ops) {
  if (!Array.isArray(base)) throw new Error('invalid_argument: base must be a list of lines');
  validateOps(base.length, ops);
  const out = [];
  let cursor = 0;
  for (const op of ops) {
    for (; cursor < op.index; cursor++) out.push(base[cursor]);
    for (const l of insertedOf(op)) out.push(l);
    cursor = endOf(op);
  }
  for (; cursor < base.length; cursor++) out.push(base[cursor]);
  return out;
}

// ---------------------------------------------------------------------------
// §3.5: overlap rule

// Insert = a point between lines; delete/replace = half-open range.
export function opsConflict(a, b) {
  const aPoint = a.op === 'insert';
  const bPoint = b.op === 'insert';
  if (aPoint && bPoint) return false;
  if (aPoint) return b.index < a.index && a.index < endOf(b);
  if (bPoint) return a.index < b.index && b.index < endOf(a);
  return a.index < endOf(b) && b.index < endOf(a);
}

// Two op lists against the same base: true if any pair overlaps. A single op
// is taken as a list of one.
export function conflicts(a, b) {
  const as = Array.isArray(a) ? a : [a];
  const bs = Array.isArray(b) ? b : [b];
  return as.some((x) => bs.some((y) => opsConflict(x, y)));
}

// ---------------------------------------------------------------------------
// §3.6: rebase

// `mine` shifted over `theirs` (both against the same base), or null on conflict.
export function rebaseOps(mine, theirs) {
  if (mine.length === 0 || theirs.length === 0) return mine;
  if (conflicts(mine, theirs)) return null;
  return mine.map((op) => {
    // A foreign op ending at or before mine counts as before it; so a foreign
    // insert at the same index stays above, a foreign range starting there does not.
    let delta = 0;
    for (const t of theirs) if (endOf(t) <= op.index) delta += lineDelta(t);
    return { ...op, index: op.index + delta };
  });
}

// ---------------------------------------------------------------------------
// Caret support

// Where base line `lineIndex` (0-based) ends up after `ops`. A line that an op
// removes maps to the start of that op's new lines.
export function mapLine(lineIndex, ops) {
  let delta = 0;
  for (const op of ops) {
    const removed = removedOf(op);
    if (removed > 0 && lineIndex >= op.index && lineIndex < op.index + removed) return op.index + delta;
    if (endOf(op) <= lineIndex) delta += lineDelta(op);
  }
  return lineIndex + delta;
}
