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
import { withColumns } from './columns.js';

// Types that mean "the parser read a line differently from what was meant"
// (notation.md §15.1); a write introducing one is blocked.
export const STRUCTURAL = new Set(['mixedGate', 'unknownStatus', 'descStray', 'duplicateId']);

// At most this many warnings per list of an answer (inspect's warnings, a
// write's added and removed, a blocked write's): a real plan has a handful
// (werkbaum.werkbaum none), while a 2 MB text of stray lines has a million
// (a 513 MB answer). A cut list says so: {listed, total}.
export const MAX_WARNINGS = 1000;

// Status key -> canonical box code, for effectiveStatus in the tree.
const CODE_BY_KEY = {
  idee: '?', geplant: ' ', highrisk: '!', arbeit: '~', durchstich: '/', fertig: 'x', prod: '^', verworfen: '-',
};

const INCLUDE_KEYS = ['tree', 'warnings', 'path', 'stations'];
const DEFAULT_INCLUDE = ['tree', 'warnings', 'path'];

// Status keys whose subtrees `hideDone` leaves out (by effective status).
const DONE_KEYS = new Set(['fertig', 'prod', 'verworfen']);

// `find` answers at most this many matches (and says how many there are).
const MAX_MATCHES = 50;
// At most this many `didYouMean` ids on a not_found.
const MAX_SUGGESTIONS = 3;
// "Did you mean" compares ids of at most this many characters (the tools'
// schemas bound every id argument to it) with at most MAX_EDITS edits, and
// stops after MAX_COMPARED_CELLS steps of the distance in all (~0.7 s on
// dukpy; a real plan's search takes a few thousand, since a different id
// leaves the band after a few rows). A 10 KB id took 19 s on dukpy, and 1,900
// near-equal ids of 1,000 characters 27 s even with the first two bounds.
const MAX_ID_CHARS = 1000;
const MAX_EDITS = 4;
const MAX_COMPARED_CELLS = 500000;
// Messages quote a value the caller passed to at most this many characters.
const MAX_QUOTED_CHARS = 40;

const TRANSFORMS = {
  parser: ['setFoldMark', 'setStatusBox', 'expandShortIds', 'shortIdClosed', 'logicalLines'],
  taiga: ['appendToken'],
  live: ['normalize', 'lines', 'text', 'computeOps', 'applyOps', 'conflicts', 'rebaseOps', 'mapLine'],
  edit: ['addNodeLine', 'addNodeBlock', 'moveSubtree', 'setSizeToken', 'removeSubtree'],
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

// Who owns each node (notation §14, the owners the load table counts it for): its
// own @people, else those of its nearest ancestor that has some.
function ownersByNode(roots) {
  const owners = new Map();
  const stack = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push([roots[i], EMPTY]);
  while (stack.length) {
    const [n, inherited] = stack.pop();
    const own = n.tags && n.tags.length ? n.tags : inherited;
    owners.set(n, own);
    const kids = n.children || EMPTY;
    for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], own]);
  }
  return owners;
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
// A short list compared with ===, not a Map keyed by text: V8 14 internalizes
// a Map key, which for a long text means comparing it with every string of
// the same length in the isolate's string table (0.7-1 ms per lookup of a
// 67 KB plan measured in mini-racer, against ~0.05 ms for this list).
const RECENT_RUNS = []; // {text, run}, oldest first
const RECENT_LIMIT = 4;
const RECENT_CHARS = 1000000;

export function runPipeline(text, withPath = true) {
  for (let i = RECENT_RUNS.length - 1; i >= 0; i--) {
    const entry = RECENT_RUNS[i];
    if (entry.text === text) {
      RECENT_RUNS.splice(i, 1);
      RECENT_RUNS.push(entry);
      return entry.run;
    }
  }
  const run = computePipeline(text, withPath);
  if (withPath && text.length <= RECENT_CHARS) {
    RECENT_RUNS.push({ text, run });
    let chars = 0;
    for (const entry of RECENT_RUNS) chars += entry.text.length;
    while (RECENT_RUNS.length > RECENT_LIMIT || chars > RECENT_CHARS) {
      chars -= RECENT_RUNS.shift().text.length;
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

// ---------------------------------------------------------------- ids

// An id as an agent spells it: `shop.live` and `#shop.live` name the same node.
export function bareId(value) {
  return typeof value === 'string' && value.startsWith('#') ? value.slice(1) : value;
}

// The first node carrying each id (notation §9), in document order.
export function firstById(roots) {
  const byId = new Map();
  for (const n of preorder(roots)) if (n.id != null && !byId.has(n.id)) byId.set(n.id, n);
  return byId;
}

// A node's ref, in the one spelling that names only it: '#id' for the first
// node carrying the id, else 'L<line>' (lookupRef refuses the one ambiguous case).
export function refOf(n, byId) {
  return n.id != null && byId.get(n.id) === n ? '#' + n.id : 'L' + n.line;
}

// How results name a node that is not the first carrier of an id: 'L<line>'.
const LINE_REF = /^L([1-9][0-9]*)$/;

// A value the caller passed, as a message quotes it: at most MAX_QUOTED_CHARS.
function quoted(value) {
  const s = String(value);
  if (s.length <= MAX_QUOTED_CHARS) return s;
  let head = s.slice(0, MAX_QUOTED_CHARS - 1);
  const last = head.charCodeAt(head.length - 1);
  if (last >= 0xd800 && last < 0xdc00) head = head.slice(0, -1); // half a pair
  return head + '…';
}

// The node a ref names, as { node } or { error }: '#id' is an id; a bare value
// is the id a node carries, else 'L<line>' is the node starting on that line.
// A bare 'L<n>' that is the id of one node and the line of another is refused
// rather than guessed, so a ref from a result never reaches the wrong node.
export function lookupRef(roots, byId, ref, what) {
  const marked = typeof ref === 'string' && ref.startsWith('#');
  const id = bareId(ref);
  const carrier = byId.get(id) || null;
  const m = marked ? null : LINE_REF.exec(id);
  const onLine = m ? preorder(roots).find((n) => n.line === Number(m[1])) || null : null;
  if (carrier && onLine && carrier !== onLine) {
    const message = `${id} is the id of the node on line ${carrier.line} and the ref of the node on line ${onLine.line}; ` +
      `pass '#${id}' for the first, or change the other with werkbaum_apply_ops`;
    return { error: { code: 'invalid_argument', message, id } };
  }
  if (carrier || onLine) return { node: carrier || onLine };
  if (m) {
    const message = `no node starts on line ${quoted(m[1])}${what ? ` (${what})` : ''}`;
    return { error: { code: 'not_found', message, id } };
  }
  return notFound(byId, id, what);
}

// Levenshtein distance of a and b when it is at most k, else k + 1. Only a
// band of width 2k + 1 around the diagonal is computed, so trying every id of
// a large plan stays cheap; budget.cells counts down the cells computed.
function distanceWithin(a, b, k, budget) {
  const n = a.length;
  const m = b.length;
  const far = k + 1;
  if (Math.abs(n - m) > k) return far;
  budget.cells -= 2 * (m + 2);
  let prev = new Array(m + 2).fill(far);
  let cur = new Array(m + 2).fill(far);
  for (let j = 0; j <= Math.min(m, k); j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    const lo = Math.max(1, i - k);
    const hi = Math.min(m, i + k);
    cur[lo - 1] = lo === 1 ? Math.min(i, far) : far;
    budget.cells -= hi - lo + 1;
    let best = cur[lo - 1];
    for (let j = lo; j <= hi; j++) {
      const step = prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
      const v = Math.min(step, prev[j] + 1, cur[j - 1] + 1, far);
      cur[j] = v;
      if (v < best) best = v;
    }
    cur[hi + 1] = far;
    if (best > k) return far;
    const swap = prev;
    prev = cur;
    cur = swap;
  }
  return Math.min(prev[m], far);
}

// Up to three existing ids close to `wanted`: a small edit distance (case
// ignored), or `wanted` as the first or last part of a dotted id. Closest
// first, then document order.
function similarIds(byId, wanted) {
  const w = String(wanted).toLowerCase();
  if (!w || w.length > MAX_ID_CHARS) return [];
  const k = Math.min(MAX_EDITS, Math.max(1, Math.floor(w.length / 3)));
  const suffix = '.' + w;
  const prefix = w + '.';
  const scored = [];
  const budget = { cells: MAX_COMPARED_CELLS };
  let order = 0;
  for (const id of byId.keys()) {
    if (budget.cells <= 0) break; // the closest of the ids compared so far
    // Only ids within k characters of the length are compared character by character.
    const near = Math.abs(id.length - w.length) <= k;
    const dotted = id.length > w.length;
    if (!near && !dotted) {
      order++;
      continue;
    }
    const c = id.toLowerCase();
    let score = near ? 2 * distanceWithin(w, c, k, budget) : 2 * k + 2;
    if (score > 2 * k && dotted && (c.endsWith(suffix) || c.startsWith(prefix))) score = 2 * k + 1;
    if (score <= 2 * k + 1) scored.push({ id, score, order });
    order++;
  }
  scored.sort((a, b) => a.score - b.score || a.order - b.order);
  return scored.slice(0, MAX_SUGGESTIONS).map((s) => s.id);
}

// The answer for an id no node carries, with the ids the agent may have meant.
function notFound(byId, id, what) {
  const error = { code: 'not_found', message: 'no node with id #' + quoted(id) + (what ? ' (' + what + ')' : ''), id };
  const similar = similarIds(byId, id);
  if (similar.length) error.didYouMean = similar;
  return { error };
}

// ---------------------------------------------------------------- output shaping

function mapToObject(map) {
  // A null prototype keeps tags such as "__proto__" ordinary keys.
  const obj = Object.create(null);
  for (const [k, v] of map) obj[k] = v;
  return obj;
}

// What nodes and summaries both say about progress and size.
function putStatusAndSize(o, n, ctx) {
  if (n.status) o.status = n.status.code;
  const eff = ctx.effective.size ? ctx.effective.get(n) : undefined;
  if (eff) o.effectiveStatus = CODE_BY_KEY[eff];
  if (n.size) o.size = n.size;
  // Like the editor's "assumed" badge: only where a size is missing and the
  // node still costs something.
  else if (!model.isDone(n) && !isDiscarded(n)) o.assumedSize = model.assumedSize(n);
}

function nodeJson(n, ctx, hideDesc) {
  const o = {};
  if (n.id != null) {
    o.id = n.id;
    // An id an earlier node already carries: the path names this node by its line.
    const ref = ctx.ref(n);
    if (ref !== '#' + n.id) o.ref = ref;
  }
  o.label = n.label;
  o.line = n.line;
  if (n.type && n.type !== 'and') o.gate = n.type;
  if (n.optional) o.optional = true;
  putStatusAndSize(o, n, ctx);
  if (n.sizeConflict) o.sizeConflict = true;
  if (n.tags && n.tags.length) o.tags = n.tags.slice();
  if (n.marks && n.marks.length) o.marks = n.marks.slice();
  if (n.deps && n.deps.length) o.deps = n.deps.slice();
  if (n.desc != null && !hideDesc) o.desc = n.desc;
  if (n.fold) o.fold = n.fold;
  if (n.focus) o.focus = true;
  if (n.url != null) o.url = n.url;
  const slug = ctx.slugs.size ? ctx.slugs.get(n) : undefined;
  if (slug) o.taigaSlug = slug;
  const ref = taiga.ticketRefOf(n);
  if (ref) o.ticketRef = ref;
  return o;
}

// A node in a list (stations, matches): enough to pick it and act on it.
// Its assignees are its owners, own or inherited.
function summaryJson(n, ctx) {
  const o = { ref: ctx.ref(n), line: n.line, label: n.label };
  putStatusAndSize(o, n, ctx);
  const owners = ctx.owners().get(n) || EMPTY;
  if (owners.length) o.assignees = owners.slice();
  return o;
}

function isDoneView(n, ctx) {
  const eff = ctx.effective.size ? ctx.effective.get(n) : undefined;
  return DONE_KEYS.has(eff || (n.status ? n.status.key : null));
}

// Nodes below n (n excluded) that the view shows, skipping hidden subtrees.
function countBelow(n, hide) {
  let count = 0;
  const stack = (n.children || EMPTY).slice();
  while (stack.length) {
    const k = stack.pop();
    if (hide && hide(k)) continue;
    count++;
    const kids = k.children || EMPTY;
    for (let i = 0; i < kids.length; i++) stack.push(kids[i]);
  }
  return count;
}

// Builds the nested JSON tree iteratively (deep plans must not recurse). The
// stack holds node, level and target list side by side (no record per node).
// `view.depth` cuts the tree: a node on that level keeps no children and says
// how many descendants it has instead. `view.hideDone` leaves out every
// subtree whose effective status is done, in production or discarded;
// `view.hideDesc` leaves out the descriptions (most of a tree's characters).
function treeJson(tops, ctx, view) {
  const out = [];
  const stats = { cut: 0, hiddenSubtrees: 0, hiddenNodes: 0 };
  const hide = view.hideDone ? (n) => isDoneView(n, ctx) : null;
  const shown = (list) => {
    if (!hide) return list;
    const keep = [];
    for (const k of list) {
      if (!hide(k)) keep.push(k);
      else {
        stats.hiddenSubtrees++;
        stats.hiddenNodes += 1 + countBelow(k, null);
      }
    }
    return keep;
  };
  const stack = [];
  const first = shown(tops);
  for (let i = first.length - 1; i >= 0; i--) stack.push(first[i], 0, out);
  while (stack.length) {
    const into = stack.pop();
    const level = stack.pop();
    const n = stack.pop();
    const o = nodeJson(n, ctx, view.hideDesc);
    into.push(o);
    const kids = n.children || EMPTY;
    if (!kids.length) continue;
    if (level >= view.depth) {
      const below = countBelow(n, hide);
      if (below) {
        o.descendants = below;
        stats.cut++;
      }
      continue;
    }
    const visible = shown(kids);
    if (!visible.length) continue;
    const list = (o.children = []);
    for (let i = visible.length - 1; i >= 0; i--) stack.push(visible[i], level + 1, list);
  }
  return { tree: out, stats };
}

// The first MAX_WARNINGS items of `list` as `json` shapes them, and {listed,
// total} when it had more (null else); the others are never shaped, so their
// texts are never built.
export function listed(list, json) {
  const items = list.length > MAX_WARNINGS ? list.slice(0, MAX_WARNINGS) : list;
  const cut = items.length < list.length ? { listed: items.length, total: list.length } : null;
  return { items: items.map(json), cut };
}

// Which of the analysis's warnings an answer lists when there are more than
// MAX_WARNINGS: the structural ones first (they block a write and fail
// `werkbaum check`, so none hides behind a thousand content warnings), then the
// others, up to the bound; both parts keep the editor's order.
function chosen(list) {
  if (list.length <= MAX_WARNINGS) return { shown: list, rest: [] };
  const keep = new Uint8Array(list.length);
  let room = MAX_WARNINGS;
  for (let i = 0; i < list.length && room; i++) {
    if (STRUCTURAL.has(list[i].type)) { keep[i] = 1; room--; }
  }
  for (let i = 0; i < list.length && room; i++) {
    if (!keep[i]) { keep[i] = 1; room--; }
  }
  const shown = [];
  const rest = [];
  for (let i = 0; i < list.length; i++) (keep[i] ? shown : rest).push(list[i]);
  return { shown, rest };
}

// Warnings a cut left out, by type in the order of first appearance:
// [{type, count, structural}] (`werkbaum check` decides its exit status on them).
function tallied(rest) {
  const counts = new Map();
  for (const w of rest) counts.set(w.type, (counts.get(w.type) || 0) + 1);
  return Array.from(counts, ([type, count]) => ({ type, count, structural: STRUCTURAL.has(type) }));
}

export function warningJson(w) {
  const o = Object.assign({}, w);
  o.text = warningsModule.warningText(w, i18n.t);
  o.structural = STRUCTURAL.has(w.type);
  return o;
}

// The needed set and the stations (§13.3) of the run, as nodes in document order.
function pathNodes(run) {
  const set = run.plan ? run.plan.set : new Set();
  // One flattening serves the needed list and the stations.
  const { nodes, parent } = flattenWithParents(run.visible);
  const inSet = new Uint8Array(nodes.length);
  const needed = [];
  if (set.size) {
    for (let i = 0; i < nodes.length; i++) {
      if (!set.has(nodes[i])) continue;
      inSet[i] = 1;
      needed.push(nodes[i]);
    }
  }
  const stations = run.plan ? stationsIn(nodes, parent, set, inSet) : [];
  return { set, needed, stations };
}

function pathJson(run, nodes, inScope, ref) {
  let loads = { loads: {}, total: 0, stations: {}, totalStations: 0 };
  if (run.plan) {
    // With an id, the subtree's own loads (owners still inherited from above it).
    const l = model.assigneeLoads(run.visible, new Set([...nodes.set].filter(inScope)));
    loads = { loads: mapToObject(l.loads), total: l.total, stations: mapToObject(l.stations), totalStations: l.totalStations };
  }
  const out = {
    needed: nodes.needed.filter(inScope).map(ref),
    stations: nodes.stations.filter(inScope).map(ref),
    exact: run.plan ? !!run.plan.exact : true,
    assigneeLoads: loads,
  };
  if (run.overload) out.overloadedAssignee = Object.assign({}, run.overload);
  return out;
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

// The words of a `find`, lower case; a leading '#' or '@' is the agent's
// spelling of an id or a person, not part of it.
function findWords(find) {
  return find.toLowerCase().split(/\s+/).filter(Boolean).map((w) => w.replace(/^[#@]/, '')).filter(Boolean);
}

// Nodes (in document order) whose label, id and owners (own or inherited
// @people) together contain every word.
function matchesJson(nodes, find, ctx) {
  const words = findWords(find);
  const found = [];
  let total = 0;
  if (!words.length) return { total, nodes: found };
  const owners = ctx.owners();
  for (const n of nodes) {
    const hay = [n.label, n.id || '', ...(owners.get(n) || EMPTY)].join('\n').toLowerCase();
    if (!words.every((w) => hay.includes(w))) continue;
    total++;
    if (found.length < MAX_MATCHES) found.push(summaryJson(n, ctx));
  }
  return { total, nodes: found };
}

// ---------------------------------------------------------------- entries

function checkAnalyzePayload(payload) {
  if (!payload || typeof payload !== 'object') throw new TypeError('analyze: payload must be an object');
  if (typeof payload.text !== 'string') throw new TypeError('analyze: text must be a string');
  if (payload.id != null && typeof payload.id !== 'string') throw new TypeError('analyze: id must be a string');
  if (payload.find != null && typeof payload.find !== 'string') throw new TypeError('analyze: find must be a string');
  for (const key of ['depth', 'maxDepth']) {
    const v = payload[key];
    if (v != null && !(Number.isInteger(v) && v >= 0)) throw new TypeError('analyze: ' + key + ' must be an integer >= 0');
  }
  const hideDone = payload.hideDone === true;
  const hideDesc = payload.hideDesc === true;
  const include = payload.include == null ? defaultInclude(payload.find != null, payload.depth != null || hideDone) : payload.include;
  if (!Array.isArray(include) || include.some((k) => !INCLUDE_KEYS.includes(k))) {
    throw new TypeError('analyze: include must be a subset of ' + INCLUDE_KEYS.join(', '));
  }
  // maxDepth is the caller's nesting limit; it cuts like depth does.
  const depth = Math.min(payload.depth ?? Infinity, payload.maxDepth ?? Infinity);
  return { include, depth, hideDone, hideDesc };
}

// A question asked with find, depth or hideDone gets just its answer (the
// matches, the shaped tree); without them, everything the editor shows.
function defaultInclude(find, shaped) {
  if (!find && !shaped) return DEFAULT_INCLUDE;
  return shaped ? ['tree'] : EMPTY;
}

function analyze(payload) {
  const { include, depth, hideDone, hideDesc } = checkAnalyzePayload(payload);
  const wantTree = include.includes('tree');
  const wantWarnings = include.includes('warnings');
  const wantPath = include.includes('path');
  const wantStations = include.includes('stations');
  // Line breaks as every store reads them (CRLF and a lone CR are LF, notation §1):
  // an inline text gets the tree its file or document would get.
  const text = payload.text.includes('\r') ? live.normalize(payload.text) : payload.text;
  const run = runPipeline(text, wantWarnings || wantPath || wantStations);
  let byId = null;
  const ids = () => byId || (byId = firstById(run.roots));

  let tops = run.roots;
  let scope = null;
  if (payload.id != null) {
    const found = lookupRef(run.roots, ids(), payload.id);
    if (!found.node) return found;
    tops = [found.node];
    scope = new Set(preorder(tops));
  }
  const inScope = (n) => !scope || scope.has(n);
  const ref = (n) => refOf(n, ids());
  let ctx = null;
  let owned = null;
  const context = () => ctx || (ctx = {
    effective: model.effectiveStatus(run.visible),
    slugs: wantTree ? model.taigaSlugs(run.roots) : new Map(),
    ref,
    owners: () => owned || (owned = ownersByNode(run.roots)),
  });

  const result = {};
  if (wantTree) {
    const { tree, stats } = treeJson(tops, context(), { depth, hideDone, hideDesc });
    result.tree = tree;
    if (stats.cut) result.cut = { depth, nodes: stats.cut };
    if (stats.hiddenSubtrees) result.hidden = { subtrees: stats.hiddenSubtrees, nodes: stats.hiddenNodes };
  }
  if (wantWarnings) {
    let list = run.warnings;
    if (scope) {
      const lines = subtreeLines(scope);
      // A mixedGate is about its group: only a subtree holding both siblings
      // (the parent's) has it, not the first child's alone.
      list = list.filter((w) => !w.line || (lines.has(w.line) && (w.type !== 'mixedGate' || lines.has(w.siblingLine))));
    }
    // everyWarning (a Python program's choice, never an agent's) lists them all.
    // Every other caller gets the cut, with the rest counted by type.
    const { shown, rest } = payload.everyWarning === true ? { shown: list, rest: [] } : chosen(list);
    const items = shown.map(warningJson);
    result.warnings = payload.columns === true ? withColumns(items, text) : items;
    if (rest.length) result.warningsCut = { listed: items.length, total: list.length, unlisted: tallied(rest) };
  }
  const onPath = wantPath || wantStations ? pathNodes(run) : null;
  if (wantPath) result.path = pathJson(run, onPath, inScope, ref);
  if (wantStations) {
    const stations = onPath.stations.filter(inScope).map((n) => summaryJson(n, context()));
    result.stations = { exact: run.plan ? !!run.plan.exact : true, nodes: stations };
  }
  if (payload.find != null) result.matches = matchesJson(scope ? preorder(tops) : preorder(run.roots), payload.find, context());
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
