// Node verbs as pure text->text functions (mcp-server.md §5.2, notation.md §17.6).
//
// This is the one place that knows how to rewrite node lines for the MCP
// verbs. Nodes are addressed by id (the first node carrying it, notation §9);
// where lines go is decided on physical lines with the node-block rules of
// RFC 003 (§17.6). Every line outside the touched block is kept byte for byte.
// Errors start with a code (`not_found:` / `invalid_argument:`) that the
// Python side maps to tool errors.

// A namespace import: a checkout's parser.js without these names still links,
// and the engine's contract check names what it lacks (docs/engine-contract.md).
import * as parser from './parser.js';

const { parse, logicalLines } = parser;

const COMMENT_RE = /%%.*$/;
const CONT_RE = /(^|[ \t])\\[ \t]*$/;
const SEP_RE = /^[ \t]*-{3,}[ \t]*$/;
const DESC_LINE_RE = /^[ \t]*"([ \t]|$)/;
const DESC_HEADER_RE = /^#([\p{L}\p{N}._-]+):?\s*$/u;
// §4.1 without the final group: what precedes the label `rest`.
const LINE_HEAD_RE = /^([ \t]*)([-|+]|=(?=[ \t]))?\s*(?:([><])(?=[ \t])\s*)?(?:\[([^\]])\]\s*)?(?:([><])(?=[ \t])\s*)?/;
const URL_RE = /https?:\/\/\S+/i;
const SIZE_RE = /(^|\s)\((XXL|XS|XL|S|M|L)\)/gi;
const SIZES = ['XS', 'S', 'M', 'L', 'XL', 'XXL'];
const DEFAULT_STEP = 2;

// ---------------------------------------------------------------------------
// Small helpers

function fail(code, message) {
  return new Error(`${code}: ${message}`);
}

function stripComment(raw) {
  return raw.replace(COMMENT_RE, '');
}

function isBlankText(raw) {
  return raw.trim() === '';
}

function indentOf(line) {
  return /^[ \t]*/.exec(line)[0];
}

// Tab = 2 columns (notation §4.1).
function widthOf(indent) {
  let w = 0;
  for (const ch of indent) w += ch === '\t' ? 2 : 1;
  return w;
}

function checkText(text) {
  if (typeof text !== 'string') throw fail('invalid_argument', 'text must be a string');
}

// null/undefined mean "not given"; anything else must be a non-empty string.
function optionalId(value, what) {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' || value === '') {
    throw fail('invalid_argument', `${what} must be a node ref: an id or L<line> (a non-empty string)`);
  }
  return value.replace(/^#/, '');
}

function requiredId(value, what) {
  const id = optionalId(value, what);
  if (id === null) throw fail('invalid_argument', `${what} is required`);
  return id;
}

// ---------------------------------------------------------------------------
// Document analysis: physical lines classified per §17.6 plus the parse tree

function contLineSet(text) {
  const set = new Set();
  const byFirst = new Map();
  for (const rec of logicalLines(text)) {
    byFirst.set(rec.line - 1, rec.cont.map((n) => n - 1));
    for (const n of rec.cont) set.add(n - 1);
  }
  return { set, byFirst };
}

// The first separator is tested on a line that starts a logical line: a `---`
// joined onto a continued line is label text, not a separator (§2.2).
function separatorIndex(L, contSet) {
  for (let i = 0; i < L.length; i++) {
    if (!contSet.has(i) && SEP_RE.test(stripComment(L[i]))) return i;
  }
  return L.length;
}

function classify(L, sep, contSet) {
  const kind = new Array(sep);
  const width = new Array(sep);
  for (let i = 0; i < sep; i++) {
    const raw = stripComment(L[i]);
    if (contSet.has(i)) kind[i] = 'cont';
    else if (isBlankText(raw)) kind[i] = 'blank';
    else if (DESC_LINE_RE.test(raw)) kind[i] = 'desc';
    else {
      kind[i] = 'node';
      width[i] = widthOf(indentOf(L[i]));
    }
  }
  return { kind, width };
}

// Pre-order list and parent links, iteratively (plans may nest very deep).
function indexTree(roots) {
  const order = [];
  const parentOf = new Map();
  const stack = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push([roots[i], null]);
  while (stack.length) {
    const [node, parent] = stack.pop();
    order.push(node);
    parentOf.set(node, parent);
    for (let i = node.children.length - 1; i >= 0; i--) stack.push([node.children[i], node]);
  }
  return { order, parentOf };
}

function analyzeDoc(text) {
  const L = text.split('\n');
  const cont = contLineSet(text);
  const sep = separatorIndex(L, cont.set);
  const { kind, width } = classify(L, sep, cont.set);
  const { roots } = parse(text);
  const { order, parentOf } = indexTree(roots);
  return { L, sep, kind, width, contOf: cont.byFirst, roots, order, parentOf };
}

// How results name a node that is not the first carrier of an id.
const LINE_REF = /^L([1-9][0-9]*)$/;

function nodeOnLine(doc, line) {
  return doc.order.find((n) => n.line === line) || null;
}

// The node a ref names: the first node carrying the id (notation §9), else
// for 'L<line>' the node starting on that line. (The writes layer hands over
// refs that cannot name two nodes: facade.js lookupRef.)
function findNode(doc, ref) {
  const carrier = doc.order.find((n) => n.id === ref);
  if (carrier) return carrier;
  const m = LINE_REF.exec(ref);
  return m ? nodeOnLine(doc, Number(m[1])) : null;
}

function resolve(doc, ref, what) {
  const node = findNode(doc, ref);
  if (!node) {
    const m = LINE_REF.exec(ref);
    const missing = m ? `no node starts on line ${m[1]}` : `no node with id #${ref}`;
    throw fail('not_found', `${missing}${what ? ` (${what})` : ''}`);
  }
  return node;
}

// How a message names a node: '#id' for the first carrier of its id, else 'L<line>'.
function refName(doc, node) {
  return node.id != null && findNode(doc, node.id) === node ? `#${node.id}` : `L${node.line}`;
}

function isInSubtree(doc, node, top) {
  for (let n = node; n; n = doc.parentOf.get(n)) if (n === top) return true;
  return false;
}

function siblingsOf(doc, parent) {
  return parent ? parent.children : doc.roots;
}

// ---------------------------------------------------------------------------
// §17.6: blocks

// Last line index of the block of the node on line index `s`: its line,
// continuation and `"` lines and everything wider, without trailing blanks.
function blockEnd(doc, s) {
  const { kind, width, sep } = doc;
  let e = s;
  for (let i = s + 1; i < sep; i++) {
    const k = kind[i];
    if (k === 'cont' || k === 'blank' || k === 'desc' || (k === 'node' && width[i] > width[s])) e = i;
    else break;
  }
  while (e > s && kind[e] === 'blank') e--;
  return e;
}

function nodeIndex(node) {
  return node.line - 1;
}

// ---------------------------------------------------------------------------
// Indentation

// The document's step: the most common width difference child - parent
// (ties: the smaller one); 2 when there are no nested nodes.
function indentStep(doc) {
  const counts = new Map();
  for (const node of doc.order) {
    const parent = doc.parentOf.get(node);
    if (!parent) continue;
    const d = doc.width[nodeIndex(node)] - doc.width[nodeIndex(parent)];
    if (d > 0) counts.set(d, (counts.get(d) || 0) + 1);
  }
  let best = DEFAULT_STEP;
  let bestCount = 0;
  for (const [d, c] of counts) {
    if (c > bestCount || (c === bestCount && d < best)) {
      best = d;
      bestCount = c;
    }
  }
  return best;
}

// Tabs when most indented node lines start with a tab.
function documentUsesTabs(doc) {
  let tabs = 0;
  let spaces = 0;
  for (let i = 0; i < doc.sep; i++) {
    if (doc.kind[i] !== 'node') continue;
    const c = doc.L[i][0];
    if (c === '\t') tabs++;
    else if (c === ' ') spaces++;
  }
  return tabs > spaces;
}

function indentUnit(width, useTabs) {
  return useTabs ? '\t'.repeat(width >> 1) + ' '.repeat(width & 1) : ' '.repeat(width);
}

// One level deeper than `parent`, in the parent's style (the document's at root
// level). `style` is the document whose step and tabs count: the text being edited,
// also when `doc` is that text with a moved block cut out.
function childIndent(doc, parent, style = doc) {
  const base = indentOf(doc.L[nodeIndex(parent)]);
  const useTabs = base === '' ? documentUsesTabs(style) : base.includes('\t');
  return base + indentUnit(indentStep(style), useTabs);
}

// ---------------------------------------------------------------------------
// Where a node goes under `parent` (null: root level), after `after` or last

function checkAfter(doc, parent, after) {
  if (after && !siblingsOf(doc, parent).includes(after)) {
    const where = parent ? `a child of ${refName(doc, parent)}` : 'a root';
    throw fail('invalid_argument', `after ${refName(doc, after)} is not ${where}`);
  }
}

// A plan without roots: after the tree part's last line with any text
// (comments count here, so a header comment stays on top) or continuation line.
function endOfTreeContent(doc) {
  for (let i = doc.sep - 1; i >= 0; i--) if (!isBlankText(doc.L[i]) || doc.kind[i] === 'cont') return i + 1;
  return 0;
}

// {index, indent}: insert before line `index`. With a sibling before the new
// place, its indentation is reused, so the new node can neither swallow the
// next sibling nor fall under the previous one. `style`: see childIndent.
function placement(doc, parent, after, style = doc) {
  const siblings = siblingsOf(doc, parent);
  const prev = after || (siblings.length ? siblings[siblings.length - 1] : null);
  if (!parent) {
    return { index: prev ? blockEnd(doc, nodeIndex(prev)) + 1 : endOfTreeContent(doc), indent: '' };
  }
  if (prev) return { index: blockEnd(doc, nodeIndex(prev)) + 1, indent: indentOf(doc.L[nodeIndex(prev)]) };
  return { index: blockEnd(doc, nodeIndex(parent)) + 1, indent: childIndent(doc, parent, style) };
}

function endsWithContinuation(line) {
  return line !== undefined && CONT_RE.test(stripComment(line));
}

// A backslash on the document's last line is just dropped (§2.2); a line put
// after it would be joined onto it.
function checkNotAfterDanglingContinuation(L, index) {
  if (index > 0 && index === L.length && endsWithContinuation(L[index - 1])) {
    throw fail('invalid_argument', `line ${index} ends with a continuation marker; the new line would be joined onto it`);
  }
}

function spliceLines(L, index, removeCount, inserted) {
  return L.slice(0, index).concat(inserted, L.slice(index + removeCount));
}

// ---------------------------------------------------------------------------
// addNodeLine

// The new line must be exactly one node line once it stands alone.
function checkNodeLine(line) {
  if (typeof line !== 'string') throw fail('invalid_argument', 'line must be a string');
  if (/[\r\n\u2028\u2029]/.test(line)) throw fail('invalid_argument', 'line must be a single line');
  const bare = line.replace(/^[ \t]+/, '');
  const visible = stripComment(bare);
  if (SEP_RE.test(visible)) throw fail('invalid_argument', 'line is a separator, not a node line');
  if (CONT_RE.test(visible)) throw fail('invalid_argument', 'line ends with a continuation marker');
  if (parse(bare).roots.length !== 1) {
    throw fail('invalid_argument', `not a node line (blank, comment, description or without a label): ${JSON.stringify(line)}`);
  }
  return bare;
}

export function addNodeLine(text, parentId, line, afterId) {
  checkText(text);
  return insertBlock(text, parentId, afterId, () => [checkNodeLine(line)]).lines.join('\n');
}

// Puts the lines `makeBlock()` checks and returns (without the placement's
// indentation) under the parent, after `after` or last: the new physical
// lines, and the number of nodes the text had before.
function insertBlock(text, parentId, afterId, makeBlock) {
  const pid = optionalId(parentId, 'parent');
  const aid = optionalId(afterId, 'after');
  const block = makeBlock();
  const doc = analyzeDoc(text);
  const parent = pid === null ? null : resolve(doc, pid, 'parent');
  const after = aid === null ? null : resolve(doc, aid, 'after');
  checkAfter(doc, parent, after);
  const { index, indent } = placement(doc, parent, after);
  checkNotAfterDanglingContinuation(doc.L, index);
  return { lines: spliceLines(doc.L, index, 0, block.map((l) => indent + l)), nodesBefore: doc.order.length };
}

// ---------------------------------------------------------------------------
// addNodeBlock

// A block is one or more nodes: each an unindented node line followed by its
// descendants and `"` description lines, indented relative to it. Returns the
// lines re-based to no indentation and how many of them are node lines.
function checkBlock(lines) {
  if (!Array.isArray(lines) || lines.length === 0) throw fail('invalid_argument', 'lines must be a non-empty list of lines');
  lines.forEach((line, i) => {
    if (typeof line !== 'string') throw fail('invalid_argument', `lines[${i}] must be a string`);
    if (/[\r\n\u2028\u2029]/.test(line)) throw fail('invalid_argument', `lines[${i}] must be a single line`);
  });
  checkNodeLine(lines[0]);
  const block = rebaseBlock(lines, indentOf(lines[0]), '');
  const joined = block.join('\n');
  const cont = contLineSet(joined);
  const sep = separatorIndex(block, cont.set);
  if (sep < block.length) throw fail('invalid_argument', `lines[${sep}] is a separator, not part of a node block`);
  const { kind } = classify(block, block.length, cont.set);
  let nodes = 0;
  kind.forEach((k, i) => {
    if (k === 'blank') throw fail('invalid_argument', `lines[${i}] is blank or only a comment; a block holds node and " description lines`);
    if (k === 'node') nodes++;
  });
  if (endsWithContinuation(block[block.length - 1])) throw fail('invalid_argument', 'the last line ends with a continuation marker');
  return { block, nodes };
}

export function addNodeBlock(text, parentId, lines, afterId) {
  checkText(text);
  let nodes = 0;
  const out = insertBlock(text, parentId, afterId, () => {
    const checked = checkBlock(lines);
    nodes = checked.nodes;
    return checked.block;
  });
  const joined = out.lines.join('\n');
  // Safety net: every node line of the block must read back as a new node.
  const added = indexTree(parse(joined).roots).order.length - out.nodesBefore;
  if (added !== nodes) {
    throw fail('invalid_argument', `the block reads as ${added} nodes instead of ${nodes} here; check its indentation`);
  }
  return joined;
}

// ---------------------------------------------------------------------------
// moveSubtree

// Removes `columns` columns of indentation (or all there is); never any text.
function shiftLeft(line, columns) {
  const indent = indentOf(line);
  let need = columns;
  let k = 0;
  while (k < indent.length && need > 0) {
    need -= indent[k] === '\t' ? 2 : 1;
    k++;
  }
  // A tab taken half-way gives one column back.
  return ' '.repeat(need < 0 ? -need : 0) + line.slice(k);
}

// Re-base a block: lines that share the node line's indentation prefix get the
// new prefix (inner indentation kept byte for byte); others shift by width.
function rebaseBlock(block, oldIndent, newIndent) {
  const delta = widthOf(newIndent) - widthOf(oldIndent);
  const useTabs = newIndent.includes('\t');
  return block.map((line) => {
    if (/^[ \t]*$/.test(line)) return line;
    if (line.startsWith(oldIndent)) return newIndent + line.slice(oldIndent.length);
    return delta >= 0 ? indentUnit(delta, useTabs) + line : shiftLeft(line, -delta);
  });
}

// Already the last child / already right after `after`: nothing to do.
function isInPlace(doc, node, parent, after) {
  if (doc.parentOf.get(node) !== parent) return false;
  const siblings = siblingsOf(doc, parent);
  const k = siblings.indexOf(node);
  return after ? siblings[k - 1] === after : k === siblings.length - 1;
}

function checkMoveTarget(doc, node, parent, after, s, e) {
  if (parent && (isInSubtree(doc, parent, node) || (nodeIndex(parent) >= s && nodeIndex(parent) <= e))) {
    throw fail('invalid_argument', `cannot move ${refName(doc, node)} into its own subtree (${refName(doc, parent)})`);
  }
  if (after === node) throw fail('invalid_argument', `cannot move ${refName(doc, node)} after itself`);
  checkAfter(doc, parent, after);
}

export function moveSubtree(text, id, parentId, afterId) {
  checkText(text);
  const nid = requiredId(id, 'id');
  const pid = optionalId(parentId, 'parent');
  const aid = optionalId(afterId, 'after');
  const doc = analyzeDoc(text);
  const node = resolve(doc, nid);
  const parent = pid === null ? null : resolve(doc, pid, 'parent');
  const after = aid === null ? null : resolve(doc, aid, 'after');
  const s = nodeIndex(node);
  const e = blockEnd(doc, s);
  checkMoveTarget(doc, node, parent, after, s, e);
  if (isInPlace(doc, node, parent, after)) return text;

  const block = doc.L.slice(s, e + 1);
  const restLines = spliceLines(doc.L, s, e - s + 1, []);
  // Place it in the text without the block: the parent's children no longer include it.
  const rest = analyzeDoc(restLines.join('\n'));
  // An id names the same node in the rest; a line ref moves up past the cut.
  const again = (ref, node, what) => {
    if (ref === null) return null;
    if (node.id === ref) return resolve(rest, ref, what);
    return nodeOnLine(rest, node.line > e + 1 ? node.line - (e - s + 1) : node.line);
  };
  const parent2 = again(pid, parent, 'parent');
  const after2 = again(aid, after, 'after');
  const { index, indent } = placement(rest, parent2, after2, doc);
  checkNotAfterDanglingContinuation(restLines, index);
  if (index < restLines.length && endsWithContinuation(block[block.length - 1])) {
    throw fail('invalid_argument', `${refName(doc, node)} ends with a continuation marker on the last line; it would swallow the next line`);
  }
  const moved = rebaseBlock(block, indentOf(block[0]), indent);
  return spliceLines(restLines, index, 0, moved).join('\n');
}

// ---------------------------------------------------------------------------
// setSizeToken

function normalizeSize(size) {
  if (size === null || size === undefined) return null;
  const up = typeof size === 'string' ? size.toUpperCase() : '';
  if (!SIZES.includes(up)) throw fail('invalid_argument', `size must be one of ${SIZES.join(', ')} or null`);
  return up;
}

// The node's logical line (§2.2) rebuilt with each character's physical
// position ({li, col}; li = -1 for the space the join adds).
function logicalWithPositions(L, first, conts) {
  let chars = [];
  const append = (li, from) => {
    const raw = stripComment(L[li]);
    for (let col = from; col < raw.length; col++) chars.push({ ch: raw[col], li, col });
  };
  const text = () => chars.map((c) => c.ch).join('');
  // Drop the backslash, keep the one whitespace character before it.
  const cutMarker = () => {
    const m = CONT_RE.exec(text());
    if (m) chars = chars.slice(0, m.index + m[1].length);
  };
  append(first, 0);
  for (const li of conts) {
    cutMarker();
    const t = text();
    if (t !== '' && !/[ \t]$/.test(t)) chars.push({ ch: ' ', li: -1, col: -1 });
    append(li, indentOf(stripComment(L[li])).length);
  }
  cutMarker(); // a marker on the document's last line is just dropped
  return chars;
}

// Position of the last free-standing size token in the label part, outside
// the URL (which §4.2 removes before looking for the size).
function findSizeToken(chars) {
  const raw = chars.map((c) => c.ch).join('');
  const restStart = LINE_HEAD_RE.exec(raw)[0].length;
  let rest = raw.slice(restStart);
  const url = URL_RE.exec(rest);
  if (url) rest = rest.slice(0, url.index) + 'x'.repeat(url[0].length) + rest.slice(url.index + url[0].length);
  let last = null;
  for (const m of rest.matchAll(SIZE_RE)) last = m;
  if (!last) return null;
  const pos = restStart + last.index + last[1].length;
  const len = last[0].length - last[1].length;
  const at = chars[pos];
  const lead = last[1] !== '' ? chars[pos - 1] : null;
  // The one leading whitespace character goes with the token only if it is on the same physical line.
  const leadOnLine = lead && lead.li === at.li && lead.col === at.col - 1;
  return { li: at.li, col: at.col, len, leadOnLine };
}

// Like appendToken (§17.4): before a `%%` comment (keeping the whitespace in
// front of it) and before a trailing ` \`. Null for a line with nothing visible.
function appendAtVisibleEnd(line, token) {
  const ci = line.indexOf('%%');
  let body = ci < 0 ? line : line.slice(0, ci);
  const comment = ci < 0 ? '' : line.slice(ci);
  let marker = '';
  const m = CONT_RE.exec(body);
  if (m) {
    const k = m.index + m[1].length;
    marker = body.slice(k);
    body = body.slice(0, k);
  }
  const ws = /[ \t]*$/.exec(body)[0];
  const core = body.slice(0, body.length - ws.length);
  if (isBlankText(core)) return null;
  return `${core} ${token}${ws}${marker}${comment}`;
}

function replaceToken(line, found, token) {
  return line.slice(0, found.col) + token + line.slice(found.col + found.len);
}

// The token goes with its one leading space; a token that opens a continuation
// line (its space is the join) takes one following space instead.
function withoutToken(line, found) {
  let from = found.col;
  let to = found.col + found.len;
  if (found.leadOnLine) from--;
  else if (/[ \t]/.test(line[to] || '')) to++;
  return line.slice(0, from) + line.slice(to);
}

function insertSize(L, physical, token) {
  for (let k = physical.length - 1; k >= 0; k--) {
    const li = physical[k];
    const out = appendAtVisibleEnd(L[li], token);
    if (out !== null) {
      L[li] = out;
      return;
    }
  }
  throw fail('invalid_argument', `no visible text on line ${physical[0] + 1} to add a size to`);
}

export function setSizeToken(text, id, size) {
  checkText(text);
  const nid = requiredId(id, 'id');
  const wanted = normalizeSize(size);
  const doc = analyzeDoc(text);
  const node = resolve(doc, nid);
  const first = nodeIndex(node);
  const conts = doc.contOf.get(first) || [];
  const found = findSizeToken(logicalWithPositions(doc.L, first, conts));
  const L = doc.L.slice();
  if (found) {
    L[found.li] = wanted === null ? withoutToken(L[found.li], found) : replaceToken(L[found.li], found, `(${wanted})`);
  } else if (wanted !== null) {
    insertSize(L, [first, ...conts], `(${wanted})`);
  } else {
    return text;
  }
  const out = L.join('\n');
  if (wanted !== null) checkSizeApplied(out, nid, wanted, refName(doc, node), node.line);
  return out;
}

// Safety net: the token must read back as the node's size.
function checkSizeApplied(out, ref, wanted, name, line) {
  const after = findNode(analyzeDoc(out), ref);
  if (!after || after.size !== wanted) {
    throw fail('invalid_argument', `could not set the size of ${name} on line ${line}; edit the line instead`);
  }
}

// ---------------------------------------------------------------------------
// removeSubtree

function subtreeNodes(node) {
  const out = [];
  const stack = [node];
  while (stack.length) {
    const n = stack.pop();
    out.push(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
  return out;
}

// Ids that lose their node: carried in the subtree and nowhere else.
function orphanedIds(doc, node) {
  const inside = new Set(subtreeNodes(node));
  const kept = new Set(doc.order.filter((n) => !inside.has(n) && n.id !== null).map((n) => n.id));
  return new Set([...inside].filter((n) => n.id !== null && !kept.has(n.id)).map((n) => n.id));
}

function descBlank(line) {
  const raw = stripComment(line);
  return isBlankText(raw) || SEP_RE.test(raw); // a further separator does nothing (§8.2)
}

// Marks each description-part block headed `#id` for an id in `ids`: the
// header, its indented lines and blank lines between them. Blank lines after
// it go too when another unindented line follows; a block that ends the
// document takes the blank lines in front of it instead, so the gap stays single.
function markDescBlocks(doc, ids, drop) {
  const { L, sep } = doc;
  for (let i = sep + 1; i < L.length; i++) {
    const header = DESC_HEADER_RE.exec(stripComment(L[i]));
    if (!header || !ids.has(header[1])) continue;
    let last = i;
    let j = i + 1;
    for (; j < L.length; j++) {
      if (descBlank(L[j])) continue;
      if (!/^[ \t]/.test(stripComment(L[j]))) break;
      last = j;
    }
    const to = j < L.length ? j - 1 : last;
    for (let k = i; k <= to; k++) drop[k] = true;
    if (j >= L.length) for (let k = i - 1; k > sep && descBlank(L[k]) && !drop[k]; k--) drop[k] = true;
    i = to;
  }
}

export function removeSubtree(text, id) {
  checkText(text);
  const nid = requiredId(id, 'id');
  const doc = analyzeDoc(text);
  const node = resolve(doc, nid);
  const s = nodeIndex(node);
  const e = blockEnd(doc, s);
  const drop = new Array(doc.L.length).fill(false);
  for (let k = s; k <= e; k++) drop[k] = true;
  markDescBlocks(doc, orphanedIds(doc, node), drop);
  return doc.L.filter((_, k) => !drop[k]).join('\n');
}
