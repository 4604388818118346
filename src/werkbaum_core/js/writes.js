// writes.js — the engine entries of the write pipeline (spec §6), loaded after
// facade.js: `edit` computes a verb's new text, its line ops and the
// guard-relevant state of base, new (and merged) text in ONE call; `state`
// reports that state for a text a store returned.
//
// The state of a text is its warnings (as `analyze` reports them) each with an
// identity `key`, and the identities of the nodes that carry [^]. Keys never
// use the line number alone, because an insertion above a warning shifts it
// without changing it (mcp-server.md §6.1).
import * as parser from './parser.js';
import * as model from './model.js';
import * as live from './live.js';
import * as edit from './edit.js';
import { preorder, runPipeline, warningJson } from './facade.js';

const SEP = '\u0000';

function firstById(roots) {
  const byId = new Map();
  for (const n of preorder(roots)) if (n.id != null && !byId.has(n.id)) byId.set(n.id, n);
  return byId;
}

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
  const warnings = run.warnings.map((w) => {
    const out = warningJson(w);
    out.key = warningKey(w, nodeAt, physical);
    return out;
  });
  const prod = nodes.filter((n) => n.status && n.status.key === 'prod').map(identity);
  return { warnings, prod };
}

function nodeLineIndex(text, id) {
  const node = firstById(parser.parse(text).roots).get(id);
  if (!node) throw new Error('not_found: no node with id #' + id);
  return node.line - 1;
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

const VERBS = {
  setStatus: (t, a) => withStatus(t, a.id, a.status),
  setSize: (t, a) => edit.setSizeToken(t, a.id, a.size),
  addNode: (t, a) => edit.addNodeLine(t, a.parent ?? null, a.line, a.after ?? null),
  moveNode: (t, a) => edit.moveSubtree(t, a.id, a.parent ?? null, a.after ?? null),
  removeNode: (t, a) => (a.discard ? withStatus(t, a.id, '-') : edit.removeSubtree(t, a.id)),
  applyOps: (t, a) => withOps(t, a.ops),
  write: (_t, a) => live.normalize(a.text),
};

function editEntry(payload) {
  const verb = VERBS[payload.verb];
  if (!verb) throw new Error('invalid_argument: unknown verb ' + payload.verb);
  const base = payload.text;
  const next = verb(base, payload.args || {});
  const ops = live.computeOps(live.lines(base), live.lines(next));
  const out = { text: next, ops, before: stateOf(base), after: stateOf(next) };
  if (payload.current !== undefined && payload.current !== base) {
    // What the backend will do with ops against an older base: shift them over
    // the changes since, or refuse when they overlap (documents-api §3.6).
    const theirs = live.computeOps(live.lines(base), live.lines(payload.current));
    const rebased = live.rebaseOps(ops, theirs);
    out.current = stateOf(payload.current);
    if (rebased === null) {
      out.merged = { conflict: true };
    } else {
      const merged = live.text(live.applyOps(live.lines(payload.current), rebased));
      out.merged = Object.assign({ text: merged, ops: rebased }, stateOf(merged));
    }
  }
  return out;
}

globalThis.werkbaum.edit = editEntry;
globalThis.werkbaum.state = (payload) => stateOf(payload.text);
