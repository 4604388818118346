// facade.js — the engine entry (docs/engine-contract.md). Imports the notation
// modules and sets globalThis.werkbaum = {analyze, transform}; every entry
// takes one JSON payload and returns plain JSON. Namespace imports keep a
// drop-in module set linkable even when it lacks an export we do not call.
import * as parser from './parser.js';
import * as model from './model.js';
import * as taiga from './taiga.js';
import * as warningsModule from './warnings.js';
import * as i18n from './i18n.js';
import * as live from './live.js';
import * as edit from './edit.js';

// Types that mean "the parser read a line differently from what was meant"
// (notation.md §15.1); a write introducing one is blocked.
const STRUCTURAL = new Set(['mixedGate', 'unknownStatus', 'descStray', 'duplicateId']);

// Status key -> canonical box code, for effectiveStatus in the tree.
const CODE_BY_KEY = {
  idee: '?', geplant: ' ', highrisk: '!', arbeit: '~', durchstich: '/', fertig: 'x', prod: '^', verworfen: '-',
};

const INCLUDE_KEYS = ['tree', 'warnings', 'path'];

const TRANSFORMS = {
  parser: ['setFoldMark', 'setStatusBox', 'expandShortIds', 'shortIdClosed', 'logicalLines'],
  taiga: ['appendToken'],
  live: ['normalize', 'lines', 'text', 'computeOps', 'applyOps', 'conflicts', 'rebaseOps', 'mapLine'],
  edit: ['addNodeLine', 'moveSubtree', 'setSizeToken', 'removeSubtree'],
};
const MODULES = { parser, taiga, live, edit };

const EMPTY = [];

// ---------------------------------------------------------------- tree helpers

function isDiscarded(n) {
  return !!n.status && n.status.key === 'verworfen';
}

// Pre-order over every node (all children), without recursion.
export function preorder(roots) {
  const out = [];
  const stack = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push(roots[i]);
  while (stack.length) {
    const n = stack.pop();
    out.push(n);
    const kids = n.children || EMPTY;
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
  }
  return out;
}

// The default view hides discarded nodes; discarded roots leave the analysis.
export function visibleRoots(roots) {
  return roots.filter((r) => !isDiscarded(r));
}

// notation.md §6: per rendered node, the types of its visible children must
// not mix. Roots are never compared; hidden (discarded) subtrees are skipped;
// folded subtrees are still checked.
export function mixedGateWarnings(roots) {
  const out = [];
  const stack = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push(roots[i]);
  while (stack.length) {
    const n = stack.pop();
    // A leaf has no visible children: no check, nothing to visit.
    if (!n.children || !n.children.length) continue;
    const kids = model.visibleChildren(n, false);
    if (kids.length > 1) {
      const first = kids[0].type;
      for (let i = 1; i < kids.length; i++) {
        if (kids[i].type !== first) {
          // siblingLine (ours, not upstream's): the first child whose gate differs.
          out.push({ type: 'mixedGate', line: kids[0].line, label: n.label, siblingLine: kids[i].line });
          break;
        }
      }
    }
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
  }
  return out;
}

// Pre-order over every node with the parent index of each (-1 for roots).
function flattenWithParents(roots) {
  const nodes = [];
  const parent = [];
  const stack = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push(roots[i], -1);
  while (stack.length) {
    const p = stack.pop();
    const n = stack.pop();
    const idx = nodes.length;
    nodes.push(n);
    parent.push(p);
    const kids = n.children || EMPTY;
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i], idx);
  }
  return { nodes, parent };
}

// §13.3 on a flattened tree; reverse order visits children first. inSet[i]
// (optional) is set.has(nodes[i]), when the caller has looked it up already.
function stationsIn(nodes, parent, set, inSet) {
  const open = new Uint8Array(nodes.length);
  const openBelow = new Uint8Array(nodes.length);
  for (let i = nodes.length - 1; i >= 0; i--) {
    const needed = inSet ? inSet[i] === 1 : set.has(nodes[i]);
    open[i] = needed && !model.isDone(nodes[i]) ? 1 : 0;
    if (parent[i] >= 0 && (open[i] || openBelow[i])) openBelow[parent[i]] = 1;
  }
  const out = [];
  for (let i = 0; i < nodes.length; i++) if (open[i] && !openBelow[i]) out.push(nodes[i]);
  return out;
}

// §13.3: needed, not done, and nothing needed-and-open below (all children).
export function stationsOf(roots, set) {
  const { nodes, parent } = flattenWithParents(roots);
  return stationsIn(nodes, parent, set);
}

function lineOf(w) {
  return w.line || 0;
}

// ---------------------------------------------------------------- pipeline (§15.2)

// The last few full pipeline runs, by text: an agent inspects, then writes
// against the same base, and the write analyses that base again; the cheapest
// path (exponential in coupled groups, bounded by EXACT_LIMIT) is then not
// recomputed. Runs are never mutated after they are built. The budget is in
// characters because QuickJS caps its heap (128 MiB) and trees grow with text.
const RECENT_RUNS = new Map();
const RECENT_LIMIT = 4;
const RECENT_CHARS = 1000000;

export function runPipeline(text, withPath = true) {
  const cached = RECENT_RUNS.get(text);
  if (cached) {
    RECENT_RUNS.delete(text);
    RECENT_RUNS.set(text, cached);
    return cached;
  }
  const run = computePipeline(text, withPath);
  if (withPath && text.length <= RECENT_CHARS) {
    RECENT_RUNS.set(text, run);
    let chars = 0;
    for (const key of RECENT_RUNS.keys()) chars += key.length;
    while (RECENT_RUNS.size > RECENT_LIMIT || chars > RECENT_CHARS) {
      const oldest = RECENT_RUNS.keys().next().value;
      chars -= oldest.length;
      RECENT_RUNS.delete(oldest);
    }
  }
  return run;
}

// Runs parse → filter discarded roots → cheapest path → mixedGate and returns
// every intermediate the entries and the conformance harness need.
function computePipeline(text, withPath) {
  const parsed = parser.parse(text);
  const roots = parsed.roots;
  const visible = visibleRoots(roots);
  const merged = parsed.warnings.slice();
  let plan = null;
  let overload = null;
  if (visible.length && withPath) {
    plan = model.computeCheapPlan(visible);
    if (!plan.exact) merged.push({ type: 'cheapApprox' });
    overload = model.overloadedAssignee(visible, plan.set);
    if (overload) {
      merged.push({
        type: 'assigneeOverload', tag: overload.tag, share: overload.share,
        stations: overload.stations, totalStations: overload.totalStations,
      });
    }
  }
  if (visible.length) for (const w of mixedGateWarnings(visible)) merged.push(w);
  // Array.prototype.sort is stable (ES2019): same-line warnings keep order.
  merged.sort((a, b) => lineOf(a) - lineOf(b));
  return { roots, visible, parseWarnings: parsed.warnings, warnings: merged, plan, overload };
}

// ---------------------------------------------------------------- output shaping

function mapToObject(map) {
  // A null prototype keeps tags such as "__proto__" ordinary keys.
  const obj = Object.create(null);
  for (const [k, v] of map) obj[k] = v;
  return obj;
}

// Refs: '#id' for the first node carrying the id, else 'L<line>'.
function refMaker(roots) {
  const first = new Map();
  const stack = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push(roots[i]);
  while (stack.length) {
    const n = stack.pop();
    if (n.id != null && !first.has(n.id)) first.set(n.id, n);
    const kids = n.children || EMPTY;
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
  }
  return (n) => (n.id != null && first.get(n.id) === n ? '#' + n.id : 'L' + n.line);
}

function nodeJson(n, ctx) {
  const o = {};
  if (n.id != null) o.id = n.id;
  o.label = n.label;
  o.line = n.line;
  if (n.type && n.type !== 'and') o.gate = n.type;
  if (n.optional) o.optional = true;
  if (n.status) o.status = n.status.code;
  const eff = ctx.effective.size ? ctx.effective.get(n) : undefined;
  if (eff) o.effectiveStatus = CODE_BY_KEY[eff];
  if (n.size) o.size = n.size;
  // Like the editor's "assumed" badge: only where a size is missing and the
  // node still costs something.
  else if (!model.isDone(n) && !isDiscarded(n)) o.assumedSize = model.assumedSize(n);
  if (n.sizeConflict) o.sizeConflict = true;
  if (n.tags && n.tags.length) o.tags = n.tags.slice();
  if (n.marks && n.marks.length) o.marks = n.marks.slice();
  if (n.deps && n.deps.length) o.deps = n.deps.slice();
  if (n.desc != null) o.desc = n.desc;
  if (n.fold) o.fold = n.fold;
  if (n.focus) o.focus = true;
  if (n.url != null) o.url = n.url;
  const slug = ctx.slugs.size ? ctx.slugs.get(n) : undefined;
  if (slug) o.taigaSlug = slug;
  const ref = taiga.ticketRefOf(n);
  if (ref) o.ticketRef = ref;
  return o;
}

// Builds the nested JSON tree iteratively (deep plans must not recurse).
// The stack holds node and target list side by side (no pair per node).
function treeJson(tops, ctx) {
  const out = [];
  const stack = [];
  for (let i = tops.length - 1; i >= 0; i--) stack.push(tops[i], out);
  while (stack.length) {
    const into = stack.pop();
    const n = stack.pop();
    const o = nodeJson(n, ctx);
    into.push(o);
    const kids = n.children || EMPTY;
    if (kids.length) {
      const list = (o.children = []);
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i], list);
    }
  }
  return out;
}

export function warningJson(w) {
  const o = Object.assign({}, w);
  o.text = warningsModule.warningText(w, i18n.t);
  o.structural = STRUCTURAL.has(w.type);
  return o;
}

function pathJson(run, scope, ref) {
  const set = run.plan ? run.plan.set : new Set();
  const inScope = (n) => !scope || scope.has(n);
  // One flattening serves the needed list and the stations.
  const { nodes, parent } = flattenWithParents(run.visible);
  const inSet = new Uint8Array(nodes.length);
  const needed = [];
  if (set.size) {
    for (let i = 0; i < nodes.length; i++) {
      if (!set.has(nodes[i])) continue;
      inSet[i] = 1;
      if (inScope(nodes[i])) needed.push(ref(nodes[i]));
    }
  }
  const stations = run.plan ? stationsIn(nodes, parent, set, inSet).filter(inScope).map(ref) : [];
  let loads = { loads: {}, total: 0, stations: {}, totalStations: 0 };
  if (run.plan) {
    // With an id, the subtree's own loads (owners still inherited from above it).
    const l = model.assigneeLoads(run.visible, scope ? new Set([...set].filter(inScope)) : set);
    loads = { loads: mapToObject(l.loads), total: l.total, stations: mapToObject(l.stations), totalStations: l.totalStations };
  }
  return {
    needed,
    stations,
    exact: run.plan ? !!run.plan.exact : true,
    assigneeLoads: loads,
    overloadedAssignee: run.overload ? Object.assign({}, run.overload) : null,
  };
}

// Lines that belong to a subtree: node lines plus their description lines.
function subtreeLines(nodes) {
  const lines = new Set();
  for (const n of nodes) {
    lines.add(n.line);
    for (const l of n.descLines || EMPTY) lines.add(l);
  }
  return lines;
}

// ---------------------------------------------------------------- entries

function checkAnalyzePayload(payload) {
  if (!payload || typeof payload !== 'object') throw new TypeError('analyze: payload must be an object');
  if (typeof payload.text !== 'string') throw new TypeError('analyze: text must be a string');
  if (payload.id != null && typeof payload.id !== 'string') throw new TypeError('analyze: id must be a string');
  const include = payload.include == null ? INCLUDE_KEYS : payload.include;
  if (!Array.isArray(include) || include.some((k) => !INCLUDE_KEYS.includes(k))) {
    throw new TypeError('analyze: include must be a subset of ' + INCLUDE_KEYS.join(', '));
  }
  return include;
}

function analyze(payload) {
  const include = checkAnalyzePayload(payload);
  const wantTree = include.includes('tree');
  const wantWarnings = include.includes('warnings');
  const wantPath = include.includes('path');
  const run = runPipeline(payload.text, wantWarnings || wantPath);

  let tops = run.roots;
  let scope = null;
  if (payload.id != null) {
    const target = preorder(run.roots).find((n) => n.id === payload.id);
    if (!target) {
      return { error: { code: 'not_found', message: 'no node with id #' + payload.id, id: payload.id } };
    }
    tops = [target];
    scope = new Set(preorder(tops));
  }

  const result = {};
  if (wantTree) {
    const ctx = {
      effective: model.effectiveStatus(run.visible),
      slugs: model.taigaSlugs(run.roots),
    };
    result.tree = treeJson(tops, ctx);
  }
  if (wantWarnings) {
    let list = run.warnings;
    if (scope) {
      const lines = subtreeLines(scope);
      list = list.filter((w) => !w.line || lines.has(w.line));
    }
    result.warnings = list.map(warningJson);
  }
  if (wantPath) result.path = pathJson(run, scope, refMaker(run.roots));
  return result;
}

function transform(payload) {
  if (!payload || typeof payload !== 'object') throw new TypeError('transform: payload must be an object');
  const { module, fn } = payload;
  const args = payload.args == null ? [] : payload.args;
  if (!Array.isArray(args)) throw new TypeError('transform: args must be an array');
  const allowed = Object.prototype.hasOwnProperty.call(TRANSFORMS, module) && TRANSFORMS[module].includes(fn);
  if (!allowed) throw new Error('unknown function ' + module + '.' + fn);
  const f = MODULES[module][fn];
  if (typeof f !== 'function') throw new Error('module ' + module + ' lacks function ' + fn);
  const value = f(...args);
  return value === undefined ? null : value;
}

globalThis.werkbaum = { analyze, transform };
