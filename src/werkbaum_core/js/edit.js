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
// Document analysis: physical lines classified as the parser reads them, plus the parse tree

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

// The §17.6 kinds of the tree part's lines, taken from the parse (`order`: its
// nodes) rather than from a classifier of their own: RFC 003's `"` test reads a
// bare `"` as a description line where the parser makes it a node (notation
// §23.7), and a verb that disagrees with the parser moves lines into the wrong
// node. 'node': a line the parser made a node; 'desc': a `"` line it gave to a
// node; 'cont': a joined-on line; 'blank': every line the parser skips (blank,
// comment-only, without a label, a `"` line before any node).
function classify(L, sep, contSet, order) {
  const kind = new Array(sep).fill('blank');
  const width = new Array(sep);
  for (const node of order) {
    const i = nodeIndex(node);
    kind[i] = 'node';
    width[i] = widthOf(indentOf(L[i]));
    for (const n of node.descLines || []) if (n - 1 < sep) kind[n - 1] = 'desc';
  }
  for (const i of contSet) if (i < sep) kind[i] = 'cont';
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
  const { roots } = parse(text);
  const { order, parentOf } = indexTree(roots);
  const { kind, width } = classify(L, sep, cont.set, order);
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
// next sibling nor fall under the previous one. That holds for roots too: a
// top level may be indented (a plan pasted from a Markdown list), and a root
// at column 0 before an indented root would become its parent. Roots never get
// wider down the document, so the previous root's indentation keeps the next
// one a root. `style`: see childIndent.
function placement(doc, parent, after, style = doc) {
  const siblings = siblingsOf(doc, parent);
  const prev = after || (siblings.length ? siblings[siblings.length - 1] : null);
  if (prev) return { index: blockEnd(doc, nodeIndex(prev)) + 1, indent: indentOf(doc.L[nodeIndex(prev)]) };
  if (!parent) return { index: endOfTreeContent(doc), indent: '' }; // a plan without nodes
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
// Safety net: a verb re-parents no node it did not mean to move

// `mapLine(i)`: the line index in the result of `doc`'s line i, -1 for a line
// the verb removed. `now`: the result's indexTree. Every node of `doc` that is
// kept must still start on its mapped line, under its old parent (`moved`:
// under `target`, null meaning root level); a node of the result that no old
// node maps to is new and must sit under `target` or under another new node.
// A placement that breaks this is a bug here, so the verb refuses instead of
// writing a tree the agent did not ask for.
function checkParents(doc, now, mapLine, moved, target) {
  const byLine = new Map(now.order.map((n) => [n.line, n]));
  const counterpart = (node) => (node ? byLine.get(mapLine(nodeIndex(node)) + 1) || null : null);
  const kept = new Set();
  for (const node of doc.order) {
    const i = mapLine(nodeIndex(node));
    if (i < 0) continue;
    const there = byLine.get(i + 1);
    if (!there) throw reparented(`${refName(doc, node)} (line ${node.line}) would no longer read as a node`);
    kept.add(there);
    if (now.parentOf.get(there) !== counterpart(node === moved ? target : doc.parentOf.get(node))) {
      throw reparented(`${refName(doc, node)} (line ${node.line}) would change its parent`);
    }
  }
  const home = counterpart(target);
  for (const node of now.order) {
    if (kept.has(node)) continue;
    const parent = now.parentOf.get(node);
    if (parent !== home && (!parent || kept.has(parent))) {
      throw reparented(`the new node on line ${node.line} would not be placed ${target ? `under ${refName(doc, target)}` : 'at root level'}`);
    }
  }
}

function reparented(what) {
  return fail('invalid_argument', `${what}; the plan's indentation does not allow this edit here, nothing was changed`);
}

function treeOf(text) {
  return indexTree(parse(text).roots);
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
  checkNotBareQuote(line, 'line');
  return bare;
}

// A node line that is only `"`: the parser makes it a node labelled `"`,
// RFC 003's block rules (and so an editor built on them) a description line
// (notation §23.7). The verbs do not write a line whose meaning depends on
// the tool reading it; a description line is `" text`, a label needs more.
function checkNotBareQuote(line, what) {
  if (stripComment(line).trim() === '"') {
    throw fail('invalid_argument', `${what} is a bare ", which reads as a node to the parser but as a description line to the editor's block rules; write " text for a description or give the node a label`);
  }
}

export function addNodeLine(text, parentId, line, afterId) {
  checkText(text);
  const out = insertBlock(text, parentId, afterId, () => [checkNodeLine(line)]);
  out.checkParents(treeOf(out.text));
  return out.text;
}

// Puts the lines `makeBlock()` checks and returns (without the placement's
// indentation) under the parent, after `after` or last: the new text, the
// number of nodes the text had before, and the safety net for the result's tree.
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
  const shifted = (i) => (i < index ? i : i + block.length);
  return {
    text: spliceLines(doc.L, index, 0, block.map((l) => indent + l)).join('\n'),
    nodesBefore: doc.order.length,
    checkParents: (now) => checkParents(doc, now, shifted, null, parent),
  };
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
  const { sep, kind } = analyzeDoc(block.join('\n'));
  if (sep < block.length) throw fail('invalid_argument', `lines[${sep}] is a separator, not part of a node block`);
  let nodes = 0;
  kind.forEach((k, i) => {
    if (k === 'blank') {
      throw fail('invalid_argument', `lines[${i}] is blank, only a comment or without a label; a block holds node and " description lines`);
    }
    if (k === 'node') {
      checkNotBareQuote(block[i], `lines[${i}]`);
      nodes++;
    }
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
  // Safety net: every node line of the block must read back as a new node.
  const now = treeOf(out.text);
  const added = now.order.length - out.nodesBefore;
  if (added !== nodes) {
    throw fail('invalid_argument', `the block reads as ${added} nodes instead of ${nodes} here; check its indentation`);
  }
  out.checkParents(now);
  return out.text;
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
  const out = spliceLines(restLines, index, 0, moved).join('\n');
  const size = e - s + 1;
  const mapLine = (i) => {
    if (i >= s && i <= e) return index + (i - s);
    const r = i < s ? i : i - size;
    return r < index ? r : r + size;
  };
  checkParents(doc, treeOf(out), mapLine, node, parent);
  return out;
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
  // writes.js checks that the result is the same node with this size (changedNode).
  return L.join('\n');
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

// The ids whose `#id` blocks the subtree owns: every such block describes the
// id's first carrier (notation §9), so it goes with that node, also when a
// later carrier stays. Left behind, it would describe that other node.
function ownedIds(doc, node) {
  const first = new Map();
  for (const n of doc.order) if (n.id !== null && !first.has(n.id)) first.set(n.id, n);
  return new Set(subtreeNodes(node).filter((n) => n.id !== null && first.get(n.id) === n).map((n) => n.id));
}

// In the description part, a line that does not end a block: blank, a comment
// or a further separator (which does nothing, §8.2).
function descBlank(line) {
  const raw = stripComment(line);
  return isBlankText(raw) || SEP_RE.test(raw);
}

// Of those, the lines removing a block never deletes: comments stay (spec
// §5.2; one may annotate the next block or close the previous one), and so do
// further separators. What goes are empty lines.
function descKept(line) {
  return !isBlankText(line) && descBlank(line);
}

// Marks each description-part block headed `#id` for an id in `ids`: the
// header, its indented lines and the empty lines between them. The empty
// lines right after it go too when another unindented line follows; a block
// that ends the document takes the empty lines right in front of it instead,
// so the gap stays single.
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
    for (let k = i; k <= last; k++) if (!descKept(L[k])) drop[k] = true;
    if (j < L.length) for (let k = last + 1; k < j && isBlankText(L[k]); k++) drop[k] = true;
    else for (let k = i - 1; k > sep && isBlankText(L[k]) && !drop[k]; k--) drop[k] = true;
    i = j - 1;
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
  markDescBlocks(doc, ownedIds(doc, node), drop);
  const out = doc.L.filter((_, k) => !drop[k]).join('\n');
  // The tree part loses exactly lines s..e; the description part comes after them.
  const size = e - s + 1;
  checkParents(doc, treeOf(out), (i) => (i < s ? i : i > e ? i - size : -1), null, null);
  return out;
}
