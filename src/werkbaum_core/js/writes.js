// writes.js — the engine entries of the write pipeline (spec §6), loaded after
// facade.js: `edit` computes a verb's new text, its line ops and the
// guard-relevant delta from base to new (and merged) text in ONE call; `delta`
// reports it from a base to a text a store returned.
//
// The state of a text is its warnings (as `analyze` reports them) each with an
// identity `key`, and the identities of the nodes that carry [^]. Keys never
// use the line number alone, because an insertion above a warning shifts it
// without changing it (mcp-server.md §6.1).
import * as parser from './parser.js';
import * as model from './model.js';
import * as live from './live.js';
import * as edit from './edit.js';
import { STRUCTURAL, editRef, firstById, listed, lookupRef, preorder, runPipeline, warningJson } from './facade.js';

const SEP = '\u0000';

// The verb arguments that name a node, and how a not_found names each one.
const ID_ARGS = [['id', null], ['parent', 'parent'], ['after', 'after']];

// Node identity across two versions: its id (first assignment), else its label path.
function identityOf(roots) {
  const byId = firstById(roots);
  const paths = model.nodeKeys(roots);
  return (n) => (n.id != null && byId.get(n.id) === n ? '#' + n.id : paths.get(n));
}

function warningKey(w, nodeAt, physical) {
  const node = w.line ? nodeAt.get(w.line) : undefined;
  switch (w.type) {
    case 'unknownStatus':
      return [w.type, w.code, node ? node.label : ''].join(SEP);
    case 'duplicateId':
    case 'unknownDep':
    case 'unknownDesc':
      return [w.type, w.id].join(SEP);
    case 'mixedGate':
    case 'xorConflict':
      return [w.type, w.label].join(SEP);
    case 'descStray':
      return [w.type, (physical[w.line - 1] || '').trim()].join(SEP);
    case 'sizeConflict':
      return [w.type, node ? (node.id != null ? '#' + node.id : node.label) : '', w.size].join(SEP);
    case 'assigneeOverload':
      return [w.type, w.tag].join(SEP);
    case 'cheapApprox':
      return w.type;
    default:
      return [w.type, w.line || 0].join(SEP);
  }
}

function stateOf(text) {
  const run = runPipeline(text);
  const nodes = preorder(run.roots);
  const nodeAt = new Map(nodes.map((n) => [n.line, n]));
  const physical = text.split('\n');
  const identity = identityOf(run.roots);
  // The raw warning with its key: texts are built only for the warnings a delta lists.
  const warnings = run.warnings.map((w) => ({ warning: w, key: warningKey(w, nodeAt, physical) }));
  const prod = nodes.filter((n) => n.status && n.status.key === 'prod').map(identity);
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

// The line index of the node an edit ref (editRef) names.
function nodeLineIndex(text, ref) {
  const roots = parser.parse(text).roots;
  const found = lookupRef(roots, firstById(roots), ref);
  if (!found.node) throw new Error(found.error.code + ': ' + found.error.message);
  return found.node.line - 1;
}

function withStatus(text, id, code) {
  const ls = text.split('\n');
  const i = nodeLineIndex(text, id);
  ls[i] = parser.setStatusBox(ls[i], code);
  return ls.join('\n');
}

function withOps(text, ops) {
  try {
    return live.text(live.applyOps(live.lines(text), ops));
  } catch (err) {
    throw new Error('invalid_argument: ops do not fit the base: ' + err.message);
  }
}

function addNode(text, a) {
  if (a.lines === undefined) return edit.addNodeLine(text, a.parent ?? null, a.line, a.after ?? null);
  if (typeof edit.addNodeBlock !== 'function') throw new Error('module edit.js lacks function addNodeBlock');
  return edit.addNodeBlock(text, a.parent ?? null, a.lines, a.after ?? null);
}

const VERBS = {
  setStatus: (t, a) => withStatus(t, a.id, a.status),
  setSize: (t, a) => edit.setSizeToken(t, a.id, a.size),
  addNode,
  moveNode: (t, a) => edit.moveSubtree(t, a.id, a.parent ?? null, a.after ?? null),
  removeNode: (t, a) => (a.discard ? withStatus(t, a.id, '-') : edit.removeSubtree(t, a.id)),
  applyOps: (t, a) => withOps(t, a.ops),
  write: (_t, a) => live.normalize(a.text),
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
    out[key] = editRef(found.node, byId);
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
  const next = verb(base, checked.args);
  const refused = tooLarge(next, payload.limit, 'the new text');
  if (refused) return refused;
  const ops = live.computeOps(live.lines(base), live.lines(next));
  const before = stateOf(base);
  const out = { text: next, ops, change: deltaOf(before, stateOf(next)) };
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
      const state = stateOf(merged);
      // change: what the merge does to the current text (guarded); fromBase: the
      // agent's delta, against the base it named.
      out.merged = { text: merged, ops: rebased, change: deltaOf(stateOf(payload.current), state), fromBase: deltaOf(before, state) };
    }
  }
  return out;
}

globalThis.werkbaum.edit = editEntry;
globalThis.werkbaum.delta = (payload) => deltaOf(stateOf(payload.base), stateOf(payload.text));
