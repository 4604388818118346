// writes.js — the engine entries of the write pipeline (spec §6), loaded after
// facade.js: `edit` computes a verb's new text, its line ops and the
// guard-relevant delta from base to new (and merged) text in ONE call; `delta`
// reports it from a base to a text a store returned.
//
// The state of a text is its warnings (as `analyze` reports them) each with an
// identity `key`, and the identities of the nodes that carry [^]. A key names
// the node a warning is about, never by its line number, because an insertion
// above a warning shifts it without changing it (mcp-server.md §6.1); the new
// text's nodes that are the base's (an untouched line, the node a move
// carried) keep the base's identities.
//
// Status and size edits are checked to leave their node the same node.
import * as parser from './parser.js';
import * as live from './live.js';
import * as edit from './edit.js';
import { STRUCTURAL, firstById, listed, lookupRef, preorder, refOf, runPipeline, warningJson } from './facade.js';

const SEP = '\u0000';

// The verb arguments that name a node, and how a not_found names each one.
const ID_ARGS = [['id', null], ['parent', 'parent'], ['after', 'after']];

// Node identity across two versions (mcp-server.md §6.1, §6.2): '#id' for the
// first carrier of an id, else the label path from the nearest ancestor with
// an id ('#plan > Tests', 'Shop > Tests' when no ancestor has one). No line
// number and no sibling ordinal goes in, so lines shifting (an insertion above,
// a same-label sibling before) change nobody's identity; two nodes with one
// identity are told apart by counting (the guard compares multisets).
// `pinned` gives nodes the identity they had before: a move changes the path
// of the node it carries, not the node (its subtree follows it).
function identities(roots, pinned) {
  const byId = firstById(roots);
  const ids = new Map();
  const parentOf = new Map();
  const stack = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push([roots[i], null]);
  while (stack.length) {
    const [n, parent] = stack.pop();
    let key = pinned ? pinned.get(n) : undefined;
    if (key === undefined) {
      if (n.id != null && byId.get(n.id) === n) key = '#' + n.id;
      else key = parent ? ids.get(parent) + ' > ' + n.label : n.label;
    }
    ids.set(n, key);
    parentOf.set(n, parent);
    const kids = n.children || [];
    for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], n]);
  }
  return { of: (n) => ids.get(n), parentOf };
}

// A warning's identity: its type and what it is about (the node, by identity),
// never its line number alone (lines shift without changing a warning).
function warningKey(w, nodeAt, identity, physical) {
  const node = w.line ? nodeAt.get(w.line) : undefined;
  const who = (n) => (n ? identity.of(n) : '');
  switch (w.type) {
    case 'unknownStatus':
      return [w.type, w.code, who(node)].join(SEP);
    case 'duplicateId':
    case 'unknownDep':
    case 'unknownDesc':
      return [w.type, w.id].join(SEP);
    case 'mixedGate': // on the group's first visible child; about its parent
      return [w.type, who(node && identity.parentOf.get(node))].join(SEP);
    case 'xorConflict':
      return [w.type, who(node)].join(SEP);
    case 'descStray':
      return [w.type, (physical[w.line - 1] || '').trim()].join(SEP);
    case 'sizeConflict':
      return [w.type, who(node), w.size].join(SEP);
    case 'assigneeOverload':
      return [w.type, w.tag].join(SEP);
    case 'cheapApprox':
      return w.type;
    default:
      return [w.type, w.line || 0].join(SEP);
  }
}

function stateOf(text, pinned) {
  const run = runPipeline(text);
  const nodes = preorder(run.roots);
  const nodeAt = new Map(nodes.map((n) => [n.line, n]));
  const physical = text.split('\n');
  const identity = identities(run.roots, pinned);
  // The raw warning with its key: texts are built only for the warnings a delta lists.
  const warnings = run.warnings.map((w) => ({
    warning: w,
    key: warningKey(w, nodeAt, identity, physical),
  }));
  const prod = nodes.filter((n) => n.status && n.status.key === 'prod').map(identity.of);
  return { warnings, prod };
}

// The entries of `items` whose key occurs more often there than in `other`
// (the later occurrences): warnings compared as multisets, so a second
// identical warning is new and a shifted line is not.
function surplus(items, other, keyOf) {
  const budget = new Map();
  for (const o of other) budget.set(keyOf(o), (budget.get(keyOf(o)) || 0) + 1);
  const out = [];
  for (const item of items) {
    const left = budget.get(keyOf(item)) || 0;
    if (left > 0) budget.set(keyOf(item), left - 1);
    else out.push(item);
  }
  return out;
}

const byKey = (entry) => entry.key;
const entryJson = (entry) => warningJson(entry.warning);

// What changed from state `before` to `after` (spec §5.3, §6): the warnings
// added and removed, the structural ones added (what blocks a write) and the
// nodes newly [^]; each list at most MAX_WARNINGS long, with {listed, total}
// where it was cut. The guard decides on the totals, so a cut hides nothing.
function deltaOf(before, after) {
  const added = surplus(after.warnings, before.warnings, byKey);
  const removed = surplus(before.warnings, after.warnings, byKey);
  const structural = added.filter((e) => STRUCTURAL.has(e.warning.type));
  const prod = surplus(after.prod, before.prod, (id) => id).sort();
  const out = { remaining: after.warnings.length - added.length };
  const lists = { added, removed, structural };
  for (const name of Object.keys(lists)) {
    const { items, cut } = listed(lists[name], entryJson);
    out[name] = items;
    if (cut) out[name + 'Cut'] = cut;
  }
  const nodes = listed(prod, (id) => id);
  out.prod = nodes.items;
  if (nodes.cut) out.prodCut = nodes.cut;
  return out;
}

// The node of `after` that moving `node` of `before` carried: its subtree
// reads like node's, and without it the rest of the tree reads as before.
// Null when none fits (the move changed more than its block) or too many
// nodes carry the label to try; then the label path stands (§6.2).
const MOVED_CANDIDATES = 64;

function shapeOf(roots, skip) {
  const out = [];
  const stack = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push([roots[i], 0]);
  while (stack.length) {
    const [n, depth] = stack.pop();
    if (n === skip) continue;
    out.push(depth + SEP + n.label);
    const kids = n.children || [];
    for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], depth + 1]);
  }
  return out.join('\n');
}

function movedNode(before, node, after) {
  const own = shapeOf([node], null);
  const rest = shapeOf(before, node);
  const candidates = preorder(after).filter((n) => n.label === node.label);
  if (candidates.length > MOVED_CANDIDATES) return null;
  return candidates.find((n) => shapeOf([n], null) === own && shapeOf(after, n) === rest) || null;
}

// The node a move carries: `pins(from, to)` keeps its base identity for the
// node of text `to` it became, moved from text `from` (the base; for a merge
// the current text, where it is the one node with that identity).
function carried(base, ref) {
  const roots = runPipeline(base).roots;
  const node = lookupRef(roots, firstById(roots), ref).node;
  if (!node) return null;
  const key = identities(roots).of(node);
  return {
    pins(from, to) {
      const fromRoots = runPipeline(from).roots;
      let own = node;
      if (from !== base) {
        const ids = identities(fromRoots);
        const same = preorder(fromRoots).filter((n) => ids.of(n) === key);
        if (same.length !== 1) return undefined;
        own = same[0];
      }
      const moved = movedNode(fromRoots, own, runPipeline(to).roots);
      return moved ? new Map([[moved, key]]) : undefined;
    },
  };
}

// Base line index -> new line index of every line no op touches (ops in
// ascending order, as computeOps gives them).
function keptLines(ops, count) {
  const kept = new Map();
  let from = 0;
  let shift = 0;
  for (const op of ops) {
    for (; from < op.index; from++) kept.set(from, from + shift);
    const removed = op.op === 'insert' ? 0 : op.count;
    from = op.index + removed;
    shift += (op.op === 'delete' ? 0 : op.lines.length) - removed;
  }
  for (; from < count; from++) kept.set(from, from + shift);
  return kept;
}

// A node whose line no op touches is the node it was when its parent is too
// (both the same kept line, both roots, or both on changed lines): it keeps
// its identity from `from`, also when a line above it was renamed (its path
// changed, it did not). The parent test keeps the diff from pairing a line
// with an equal line under another parent. `pins` (a move's) go first. Only
// where the ops count lines as the parser does (no lone CR).
function keptPins(from, to, ops, pins) {
  const out = new Map(pins || []);
  if (from.includes('\r') || to.includes('\r')) return out;
  const fromRoots = runPipeline(from).roots;
  const toRoots = runPipeline(to).roots;
  const was = identities(fromRoots);
  const is = identities(toRoots);
  const toAt = new Map(preorder(toRoots).map((n) => [n.line - 1, n]));
  const kept = keptLines(ops, live.lines(from).length);
  const keptTo = new Set(kept.values());
  const sameParent = (p, q) => {
    if (!p || !q) return !p && !q;
    const j = kept.get(p.line - 1);
    return j === undefined ? !keptTo.has(q.line - 1) : j === q.line - 1;
  };
  for (const n of preorder(fromRoots)) {
    const j = kept.get(n.line - 1);
    const again = j === undefined ? undefined : toAt.get(j);
    if (!again || out.has(again) || !sameParent(was.parentOf.get(n), is.parentOf.get(again))) continue;
    out.set(again, was.of(n));
  }
  return out;
}

// The base identities nodes of `to` (computed from `from` with `ops`) keep:
// the node a move carried, and for a whole text or raw ops, which can rewrite
// any line (an ancestor's label), every node on an untouched line. The other
// verbs keep every label, so only a moved node's path changes.
function pinsFor(verb, move, from, to, ops) {
  const pins = move ? move.pins(from, to) : undefined;
  return verb === 'write' || verb === 'applyOps' ? keptPins(from, to, ops, pins) : pins;
}

// The base's pipeline run and the node an edit ref (refOf) names in it.
function baseNode(text, ref) {
  const run = runPipeline(text);
  const found = lookupRef(run.roots, firstById(run.roots), ref);
  if (!found.node) throw new Error(found.error.code + ': ' + found.error.message);
  return { run, node: found.node };
}

// The physical line indexes joined onto the node's first line (notation §2.2).
function continuationLinesOf(text, node) {
  for (const rec of parser.logicalLines(text)) if (rec.line === node.line) return rec.cont.map((c) => c - 1);
  return [];
}

// The box as written: a status's code, an unknown box's character, or null.
function boxOf(run, node) {
  if (node.status) return node.status.code;
  const w = run.warnings.find((x) => x.type === 'unknownStatus' && x.line === node.line);
  return w ? w.code : null;
}

const KEPT = [['label', 'label'], ['id', 'id'], ['type', 'gate'], ['optional', 'gate'], ['fold', 'fold mark']];

// Why `out` no longer holds `node` of the base `run` as the same node with only
// its box (what = 'status') or size token (what = 'size') set to `wanted`, or
// null when it does. Status and size edits keep every line, so the node still
// starts on its line.
function changedNode(run, node, out, what, wanted) {
  const after = runPipeline(out);
  const nodes = preorder(after.roots);
  const again = nodes.find((n) => n.line === node.line);
  if (!again) return `line ${node.line} would no longer start a node`;
  if (nodes.length !== preorder(run.roots).length) return 'the number of nodes would change';
  for (const [field, name] of KEPT) {
    if (again[field] === node[field]) continue;
    return field === 'label' ? `its label would read ${JSON.stringify(again.label)}` : `its ${name} would change`;
  }
  const box = boxOf(after, again);
  if (what !== 'status' && box !== boxOf(run, node)) return 'its status would change';
  if (what !== 'size' && again.size !== node.size) return 'its size would change';
  const got = what === 'status' ? box : again.size;
  if (got !== wanted) return `its ${what} would read ${got === null ? 'as none' : JSON.stringify(got)}`;
  return null;
}

function refusedEdit(run, node, doing, problem) {
  const name = refOf(node, firstById(run.roots));
  return new Error(`invalid_argument: cannot ${doing} ${name} on line ${node.line} without changing the node ` +
    `(${problem}); edit the line with werkbaum_apply_ops instead`);
}

// §17.2 on the physical line that holds the node's head: the first line, or
// for a node continued from a line without its gate or box (`  \` + `- Kind`,
// `- \` + `[ ] Label`) the line where they are. An edit that would change the
// node itself (`[x] " quoted` without its box is a description line) is refused.
function withStatus(text, ref, code) {
  const { run, node } = baseNode(text, ref);
  const wanted = code === 'X' ? 'x' : code;
  const ls = text.split('\n');
  let problem = null;
  const first = node.line - 1;
  const tryLine = (i) => {
    const edited = ls.slice();
    edited[i] = parser.setStatusBox(ls[i], code);
    const out = edited.join('\n');
    const why = changedNode(run, node, out, 'status', wanted);
    problem = problem || why;
    return why === null ? out : null;
  };
  const out = tryLine(first);
  if (out !== null) return out;
  for (const i of continuationLinesOf(text, node)) {
    const next = tryLine(i);
    if (next !== null) return next;
  }
  throw refusedEdit(run, node, code == null ? 'remove the status box of' : 'set the status of', problem);
}

// edit.js places or removes the token; the result must still be the same node.
function withSize(text, ref, size) {
  const out = edit.setSizeToken(text, ref, size);
  const { run, node } = baseNode(text, ref);
  const wanted = size == null ? null : String(size).toUpperCase();
  const why = changedNode(run, node, out, 'size', wanted);
  if (why !== null) throw refusedEdit(run, node, size == null ? 'remove the size of' : 'set the size of', why);
  return out;
}

function withOps(text, ops) {
  try {
    return live.text(live.applyOps(live.lines(text), ops));
  } catch (err) {
    // live.js codes its own messages (invalid_argument: …); one code leads the answer.
    const why = String(err.message).replace(/^invalid_argument: /, '');
    throw new Error('invalid_argument: ops do not fit the base: ' + why);
  }
}

// A leading U+FEFF of a written text is the byte-order mark, not content
// (werkbaum_stdio/file_text.py): dropped here, before ops, diff and guard see
// it, for every store.
function withoutBom(text) {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function addNode(text, a) {
  if (a.lines === undefined) return edit.addNodeLine(text, a.parent ?? null, a.line, a.after ?? null);
  if (typeof edit.addNodeBlock !== 'function') throw new Error('module edit.js lacks function addNodeBlock');
  return edit.addNodeBlock(text, a.parent ?? null, a.lines, a.after ?? null);
}

const VERBS = {
  setStatus: (t, a) => withStatus(t, a.id, a.status),
  setSize: (t, a) => withSize(t, a.id, a.size),
  addNode,
  moveNode: (t, a) => edit.moveSubtree(t, a.id, a.parent ?? null, a.after ?? null),
  removeNode: (t, a) => (a.discard ? withStatus(t, a.id, '-') : edit.removeSubtree(t, a.id)),
  applyOps: (t, a) => withOps(t, a.ops),
  write: (_t, a) => withoutBom(a.text),
};

// The verb's arguments with every node ref in the edit module's spelling
// (`#a` and `a` name the same node, `L9` a node without an id of its own); a
// ref that names no node of the base is answered as not_found, with the ids
// the agent may have meant.
function checkedArgs(base, args) {
  const out = Object.assign({}, args);
  let roots = null;
  let byId = null;
  for (const [key, what] of ID_ARGS) {
    if (typeof out[key] !== 'string' || out[key] === '') continue;
    roots = roots || runPipeline(base).roots;
    byId = byId || firstById(roots);
    const found = lookupRef(roots, byId, out[key], what);
    if (!found.node) return found;
    out[key] = refOf(found.node, byId);
  }
  return { args: out };
}

// Code points, as the host counts characters (only worth counting near the limit).
function charCount(text) {
  let n = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) { n--; i++; }
    }
  }
  return n;
}

// A text over the host's limit is refused before it is analysed (the real
// write would refuse it too, so a dry run must not report success).
function tooLarge(text, limit, what) {
  if (limit == null || text.length <= limit) return null;
  const size = charCount(text);
  if (size <= limit) return null;
  return { error: { code: 'too_large', message: what + ' would have ' + size + ' characters; the limit is ' + limit, limit, size } };
}

function editEntry(payload) {
  const verb = VERBS[payload.verb];
  if (!verb) throw new Error('invalid_argument: unknown verb ' + payload.verb);
  const base = payload.text;
  const checked = checkedArgs(base, payload.args || {});
  if (checked.error) return checked;
  // Normalised as the stores will save it (documents-api §3.1): a line break
  // inside an op line or a verb's output is a line break for the ops, the
  // guard and the diff too, not only for the file or the backend.
  const next = live.normalize(verb(base, checked.args));
  const refused = tooLarge(next, payload.limit, 'the new text');
  if (refused) return refused;
  const ops = live.computeOps(live.lines(base), live.lines(next));
  const move = payload.verb === 'moveNode' ? carried(base, checked.args.id) : null;
  const pins = pinsFor(payload.verb, move, base, next, ops);
  const before = stateOf(base);
  const out = { text: next, ops, change: deltaOf(before, stateOf(next, pins)) };
  if (payload.current !== undefined && payload.current !== base) {
    // What the backend will do with ops against an older base: shift them over
    // the changes since, or refuse when they overlap (documents-api §3.6).
    const theirs = live.computeOps(live.lines(base), live.lines(payload.current));
    const rebased = live.rebaseOps(ops, theirs);
    if (rebased === null) {
      out.merged = { conflict: true };
    } else {
      const merged = live.text(live.applyOps(live.lines(payload.current), rebased));
      const over = tooLarge(merged, payload.limit, 'your change merged into the current version');
      if (over) return over;
      const mergedPins = pinsFor(payload.verb, move, payload.current, merged, rebased);
      const state = stateOf(merged, mergedPins);
      // change: what the merge does to the current text (guarded); fromBase: the
      // agent's delta, against the base it named.
      out.merged = {
        text: merged,
        ops: rebased,
        change: deltaOf(stateOf(payload.current), state),
        fromBase: deltaOf(before, state),
      };
    }
  }
  return out;
}

globalThis.werkbaum.edit = editEntry;
globalThis.werkbaum.delta = (payload) => deltaOf(stateOf(payload.base), stateOf(payload.text));
