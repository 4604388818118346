// model.js — computed semantics over parse() nodes (notation.md §6, §10–§14,
// §16, §19). Pure functions over the node records of notation.md §4.3; no DOM,
// no host APIs. Walks are iterative because plans may nest ~5000 levels deep
// and QuickJS has a 1 MiB stack.

const SIZES = ['XS', 'S', 'M', 'L', 'XL', 'XXL'];
const SIZE_INDEX = { XS: 0, S: 1, M: 2, L: 3, XL: 4, XXL: 5 };
const RANK_KEYS = ['idee', 'geplant', 'arbeit', 'durchstich', 'fertig', 'prod'];
const EMPTY = [];

// D42: above this many coupled assignments the plan falls back to local choices.
const EXACT_LIMIT = 20000;

export const PROGRESS_RANK = {
  idee: 0, geplant: 1, highrisk: 1, arbeit: 2, durchstich: 3, fertig: 4, prod: 5,
};

// ---------------------------------------------------------------- helpers

function statusKey(n) {
  return n.status ? n.status.key : null;
}

function isDiscarded(n) {
  return statusKey(n) === 'verworfen';
}

function kidsOf(n) {
  return n.children || EMPTY;
}

// Pre-order list of every node (all children, discarded included) plus the
// parent index of each entry (-1 for roots). Document order equals pre-order.
// The stack holds sibling lists with a cursor each, not single nodes: that
// pushes once per parent instead of once per node.
function flatten(roots) {
  const nodes = [];
  const parent = [];
  const lists = [roots];
  const cursor = [0];
  const owner = [-1];
  let top = 0;
  while (top >= 0) {
    const list = lists[top];
    const at = cursor[top];
    if (at >= list.length) { top--; continue; }
    cursor[top] = at + 1;
    const n = list[at];
    const idx = nodes.length;
    nodes.push(n);
    parent.push(owner[top]);
    const kids = n.children;
    if (kids && kids.length) {
      top++;
      lists[top] = kids;
      cursor[top] = 0;
      owner[top] = idx;
    }
  }
  return { nodes, parent };
}

// True when test(n) holds for some node (all children), without building lists.
function anyNode(roots, test) {
  const stack = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push(roots[i]);
  while (stack.length) {
    const n = stack.pop();
    if (test(n)) return true;
    const kids = n.children;
    if (kids) for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
  }
  return false;
}

// ---------------------------------------------------------------- gates and predicates

export function gateOf(children) {
  const first = children && children[0];
  if (first && (first.type === 'or' || first.type === 'xor')) return first.type;
  return 'and';
}

export function needsBreakdown(n) {
  return !isDiscarded(n) && !!n.size && SIZE_INDEX[n.size] >= SIZE_INDEX.M
    && kidsOf(n).length === 0;
}

export function atMostM(n) {
  return !!n.size && SIZE_INDEX[n.size] <= SIZE_INDEX.M;
}

export function isDone(n) {
  const k = statusKey(n);
  return k === 'fertig' || k === 'prod';
}

export function isRealized(n) {
  const k = statusKey(n);
  return k === 'arbeit' || k === 'durchstich' || k === 'fertig' || k === 'prod';
}

export function isStarted(n) {
  return isRealized(n) && !isDone(n);
}

export function visibleChildren(n, showDiscarded) {
  const kids = kidsOf(n);
  return showDiscarded ? kids.slice() : kids.filter((k) => !isDiscarded(k));
}

// Optional extras count only while started (D61); discarded never.
export function pathChildren(n) {
  return kidsOf(n).filter(isPathChild);
}

// A made choice is final: cost decides only among realized alternatives.
export function chosenPool(kids) {
  const realized = kids.filter(isRealized);
  return realized.length ? realized : kids;
}

// ---------------------------------------------------------------- sizes and costs

const assumedMemo = new WeakMap();

// Children that count for the estimate: neither optional nor discarded.
function counts(k) {
  return !k.optional && !isDiscarded(k);
}

// §12.4 for one node whose counting children are already resolved. Written
// as plain loops because it runs once per node of every analysed plan.
function estimate(n) {
  const kids = kidsOf(n);
  let first = null;
  let anyRealized = false;
  for (const k of kids) {
    if (!counts(k)) continue;
    if (!first) first = k;
    if (isRealized(k)) anyRealized = true;
  }
  if (!first) return 'M'; // a true leaf, or only optional/discarded children
  if (first.type === 'or' || first.type === 'xor') {
    // Pool = realized counting children if any, else all; a done member
    // means the choice is settled: only wrap-up remains.
    let best = 5;
    for (const k of kids) {
      if (!counts(k) || (anyRealized && !isRealized(k))) continue;
      if (isDone(k)) return 'XS';
      best = Math.min(best, SIZE_INDEX[assumedSize(k)]);
    }
    return SIZES[best];
  }
  let max = -1;
  let count = 0;
  for (const k of kids) {
    if (!counts(k) || isDone(k)) continue;
    const r = SIZE_INDEX[assumedSize(k)];
    if (r > max) { max = r; count = 1; } else if (r === max) count++;
  }
  if (max < 0) return 'XS'; // everything named is done
  return SIZES[Math.min(max + (count >= 3 ? 1 : 0), 5)];
}

// Explicit size, else the D66/D70 estimate. Resolved bottom-up with an
// explicit stack so that deep chains never recurse.
export function assumedSize(n) {
  if (n.size) return n.size;
  const known = assumedMemo.get(n);
  if (known !== undefined) return known;
  const stack = [n];
  const expanded = [false];
  while (stack.length) {
    const top = stack.length - 1;
    const node = stack[top];
    if (!expanded[top]) {
      expanded[top] = true;
      for (const k of kidsOf(node)) {
        if (!k.size && counts(k) && !assumedMemo.has(k)) { stack.push(k); expanded.push(false); }
      }
      continue;
    }
    stack.pop();
    expanded.pop();
    if (!assumedMemo.has(node)) assumedMemo.set(node, estimate(node));
  }
  return assumedMemo.get(n);
}

export function ownCost(n) {
  return isDone(n) ? 0 : SIZE_INDEX[assumedSize(n)] + 1;
}

// D69: the size prices the whole subtree; parts are not added on top.
export function cheapestCost(n) {
  return ownCost(n);
}

// ---------------------------------------------------------------- cheapest path (§13.2)
//
// Everything below works on pre-order node indices and typed arrays. The
// default executor (QuickJS) has no JIT: Maps, Sets, closures created in
// loops and per-node allocations cost far more there than on node, so the
// hot paths are plain loops over typed arrays.

// Index view of the tree. Children are stepped through by subtree size (the
// first child follows its parent, each next sibling follows the previous
// sibling's subtree), so no node→index Map is needed.
function buildPlanIndex(roots) {
  const { nodes, parent } = flatten(roots);
  const N = nodes.length;
  const span = new Int32Array(N).fill(1);
  for (let i = N - 1; i >= 0; i--) if (parent[i] >= 0) span[parent[i]] += span[i];

  // Status flags from one status lookup per node (§7, §13.1).
  const onPath = new Uint8Array(N);
  const realized = new Uint8Array(N);
  const discarded = new Uint8Array(N);
  const referenced = new Set();
  const rootIdx = [];
  for (let i = 0; i < N; i++) {
    const n = nodes[i];
    const key = statusKey(n);
    const isDone = key === 'fertig' || key === 'prod';
    realized[i] = isDone || key === 'arbeit' || key === 'durchstich' ? 1 : 0;
    discarded[i] = key === 'verworfen' ? 1 : 0;
    onPath[i] = !discarded[i] && (!n.optional || (realized[i] && !isDone)) ? 1 : 0;
    if (parent[i] < 0) rootIdx.push(i);
    const deps = n.deps;
    if (deps) for (let d = 0; d < deps.length; d++) referenced.add(deps[d]);
  }
  // Ids matter only as dependency targets: byId keeps the referenced ones.
  const byId = new Map();
  const touches = new Uint8Array(N);
  if (referenced.size) {
    for (let i = 0; i < N; i++) {
      const n = nodes[i];
      if (n.deps && n.deps.length) touches[i] = 1;
      if (n.id == null || !referenced.has(n.id)) continue;
      touches[i] = 1;
      if (!byId.has(n.id)) byId.set(n.id, i);
    }
  }
  // touches(n) also holds when any descendant touches; children come after
  // their parent in pre-order.
  for (let i = N - 1; i >= 0; i--) if (touches[i] && parent[i] >= 0) touches[parent[i]] = 1;

  // Children before parents, so every assumedSize() call finds its kids memoised.
  const own = new Int32Array(N);
  for (let i = N - 1; i >= 0; i--) own[i] = ownCost(nodes[i]);

  // Path children as CSR (pkStart[i] .. pkStart[i+1]); a node is the path
  // child of at most its tree parent, recorded as pathParent.
  const pkStart = new Int32Array(N + 1);
  const pkList = new Int32Array(N);
  const pathParent = new Int32Array(N).fill(-1);
  const disjunctive = new Uint8Array(N);
  let len = 0;
  for (let i = 0; i < N; i++) {
    pkStart[i] = len;
    const end = i + span[i];
    for (let c = i + 1; c < end; c += span[c]) {
      if (onPath[c]) { pkList[len++] = c; pathParent[c] = i; }
    }
    if (len - pkStart[i] > 1) {
      const gate = nodes[pkList[pkStart[i]]].type;
      if (gate === 'or' || gate === 'xor') disjunctive[i] = 1;
    }
  }
  pkStart[N] = len;

  // Dependency targets by first assignment; discarded targets are never pulled.
  const depStart = new Int32Array(N + 1);
  const depList = [];
  for (let i = 0; i < N; i++) {
    depStart[i] = depList.length;
    const deps = nodes[i].deps;
    if (!deps) continue;
    for (let d = 0; d < deps.length; d++) {
      const t = byId.get(deps[d]);
      if (t !== undefined && !discarded[t]) depList.push(t);
    }
  }
  depStart[N] = depList.length;

  return {
    nodes, N, own, realized, touches, pkStart, pkList, pathParent, disjunctive,
    depStart, depList: Int32Array.from(depList), rootIdx, anyDeps: referenced.size > 0,
  };
}

// Choice groups in pre-order. The local choice is the first pool member with
// the strictly smallest own cost (ties to the first); a group is coupled when
// its pool has a choice and some member touches a dependency.
function buildGroups(ix) {
  const { N, own, realized, touches, pkStart, pkList, disjunctive, anyDeps } = ix;
  const localChoice = new Int32Array(N).fill(-1);
  const coupled = []; // {owner, pool: Int32Array}, in pre-order of the owners
  for (let i = 0; i < N; i++) {
    if (!disjunctive[i]) continue;
    const from = pkStart[i];
    const to = pkStart[i + 1];
    let anyRealized = 0;
    for (let p = from; p < to; p++) anyRealized |= realized[pkList[p]];
    const pool = [];
    let best = -1;
    let anyTouch = 0;
    for (let p = from; p < to; p++) {
      const k = pkList[p];
      if (anyRealized && !realized[k]) continue;
      pool.push(k);
      anyTouch |= touches[k];
      if (best < 0 || own[k] < own[best]) best = k;
    }
    localChoice[i] = best;
    if (anyDeps && pool.length > 1 && anyTouch) coupled.push({ owner: i, pool: Int32Array.from(pool) });
  }
  return { localChoice, coupled };
}

// product of the coupled pool sizes, stopping once it passes the limit.
function assignmentCount(coupled) {
  let product = 1;
  for (let g = 0; g < coupled.length && product <= EXACT_LIMIT; g++) product *= coupled[g].pool.length;
  return product;
}

// needed() of §13.2 step 5 as a reachability walk. choice[i] is the member
// to follow for a disjunctive node i, or -1 to leave it open: such owners are
// appended to `opened` (if given) instead. Nodes marked in `stop` are not
// entered. Returns the nodes added to inSet, in visiting order.
function reach(ix, starts, choice, inSet, stop, opened) {
  const { pkStart, pkList, disjunctive, depStart, depList } = ix;
  const out = [];
  const work = starts.slice();
  while (work.length) {
    const i = work.pop();
    if (inSet[i] || (stop !== null && stop[i])) continue;
    inSet[i] = 1;
    out.push(i);
    if (disjunctive[i]) {
      if (choice[i] >= 0) work.push(choice[i]); else if (opened !== null) opened.push(i);
    } else {
      for (let p = pkStart[i]; p < pkStart[i + 1]; p++) work.push(pkList[p]);
    }
    for (let p = depStart[i]; p < depStart[i + 1]; p++) work.push(depList[p]);
  }
  return out;
}

// Margin measure of §13.2 step 6, for a plain membership array.
function costOfMembers(ix, list, inSet) {
  const { own, pkStart, pkList } = ix;
  let cost = 0;
  for (const i of list) {
    let parts = 0;
    for (let p = pkStart[i]; p < pkStart[i + 1]; p++) if (inSet[pkList[p]]) parts += own[pkList[p]];
    if (own[i] > parts) cost += own[i] - parts;
  }
  return cost;
}

function setFromMembers(ix, inSet) {
  const set = new Set();
  for (let i = 0; i < ix.N; i++) if (inSet[i]) set.add(ix.nodes[i]);
  return set;
}

// The needed set for given members of the coupled groups (-1 entries: local).
function neededFor(ix, groups, assignment) {
  const choice = Int32Array.from(groups.localChoice);
  const { coupled } = groups;
  if (assignment) for (let g = 0; g < coupled.length; g++) choice[coupled[g].owner] = coupled[g].pool[assignment[g]];
  const inSet = new Uint8Array(ix.N);
  reach(ix, ix.rootIdx, choice, inSet, null, null);
  return inSet;
}

// ---- the coupled search (§13.2 steps 7–8)
//
// For an assignment, the needed set is R = base ∪ the closures of the chosen
// members of the *active* groups, where base is the walk from the roots with
// the coupled groups left open, a member's closure is its walk (groups left
// open, base not entered), and a group is active when its owner lies in base
// or in the closure of an active group's chosen member. prepareSearch()
// reduces that to a small problem:
//
// * Closure nodes fall into *classes* whose nodes are needed together: every
//   node of a class lies in the same closures. closureClasses() finds them
//   from the graph of the walks, never from lists of closures (a module
//   shared by thousands of members would make those lists as long as the
//   plan times the members). A class is needed exactly when it holds the
//   member of an active closure or a class with an edge into it is needed.
// * A closure node is *static* if its path children outside base are in its
//   own class, and its path parent is in its own class too or never needed.
//   Its margin is then a constant whenever its class is needed, so each class
//   carries the constant sum of its static margins.
// * Every other node of base ∪ closures whose margin can change is *dynamic*
//   (nodes with children of another class, class roots hanging under nodes of
//   another class or base, base nodes with such children). They get compact
//   ids and their margins are kept by reference counting.
//
// A group change then costs O(classes that become needed or unneeded, their
// edges and dynamic nodes), not O(closure size): switching between members
// that share a module leaves the module's classes alone. Results equal plain
// needed()+costOf() enumeration; _cheapPlanBy exists to test exactly that.
// `collapse: false` makes every closure node dynamic (no static parts), as a
// cross-check.
function prepareSearch(ix, groups, collapse) {
  const { N, own, pkStart, pkList, pathParent } = ix;
  const { localChoice, coupled } = groups;
  const G = coupled.length;
  const groupOf = new Int32Array(N).fill(-1);
  const open = Int32Array.from(localChoice);
  for (let g = 0; g < G; g++) { groupOf[coupled[g].owner] = g; open[coupled[g].owner] = -1; }

  const isBase = new Uint8Array(N);
  const baseOpened = [];
  reach(ix, ix.rootIdx, open, isBase, null, baseOpened);

  // Closures, numbered c = groupStart[g] + j for member j of group g.
  const groupStart = new Int32Array(G + 1);
  const members = [];
  const memberGroup = [];
  for (let g = 0; g < G; g++) {
    groupStart[g] = members.length;
    for (const m of coupled[g].pool) { members.push(m); memberGroup.push(g); }
  }
  groupStart[G] = members.length;

  const { classOf, K, succStart, succList, topo } = closureClasses(ix, open, isBase, members, memberGroup);
  const startClass = Int32Array.from(members, (m) => (isBase[m] ? -1 : classOf[m]));

  // The groups each closure opens: owners in its classes or in classes below
  // them. At most 14 coupled groups fit the exact limit (2^15 > 20000), so a
  // bit mask per class holds them.
  const below = new Int32Array(K);
  for (let g = 0; g < G; g++) {
    const o = coupled[g].owner;
    if (classOf[o] >= 0) below[classOf[o]] |= 1 << g;
  }
  for (let t = K - 1; t >= 0; t--) {
    const k = topo[t];
    for (let e = succStart[k]; e < succStart[k + 1]; e++) below[k] |= below[succList[e]];
  }
  const opens = Array.from(startClass, (k) => {
    const list = [];
    if (k >= 0) for (let g = 0; g < G; g++) if (below[k] & (1 << g)) list.push(g);
    return list;
  });

  const inU = (i) => classOf[i] >= 0;
  const live = (i) => isBase[i] === 1 || classOf[i] >= 0; // may be needed at all
  // k is tied to its path parent p when both are in one class: then k is
  // needed exactly when p is.
  const tied = (k, p) => collapse && classOf[k] >= 0 && classOf[k] === classOf[p];

  // kidSum: own costs of the path children present whenever the node is;
  // loose: how many path children may come and go independently.
  const kidSum = new Int32Array(N);
  const loose = new Int32Array(N);
  for (let i = 0; i < N; i++) {
    if (!live(i)) continue;
    for (let p = pkStart[i]; p < pkStart[i + 1]; p++) {
      const k = pkList[p];
      if (isBase[k] || tied(k, i)) kidSum[i] += own[k];
      else if (inU(k)) loose[i]++;
    }
  }
  const margin0 = (i) => (own[i] > kidSum[i] ? own[i] - kidSum[i] : 0);
  const isStatic = (i) => {
    if (!collapse || !inU(i) || loose[i] > 0) return false;
    const p = pathParent[i];
    return p < 0 || !live(p) || tied(i, p);
  };

  // Static margins per class; compact ids for the dynamic nodes, in pre-order.
  const classConst = new Int32Array(K);
  const dynId = new Int32Array(N).fill(-1);
  const dynNodes = [];
  let fixedCost = 0;
  for (let i = 0; i < N; i++) {
    if (isBase[i] ? loose[i] > 0 : inU(i) && !isStatic(i)) { dynId[i] = dynNodes.length; dynNodes.push(i); }
    else if (isBase[i]) fixedCost += margin0(i);
    else if (inU(i)) classConst[classOf[i]] += margin0(i);
  }
  const D = dynNodes.length;
  const dOwn = new Int32Array(D);
  const dKidSum = new Int32Array(D);
  const dParent = new Int32Array(D).fill(-1); // whose margin this node's presence changes
  const dBase = new Uint8Array(D);
  const classDyn = Array.from({ length: K }, () => []);
  for (let d = 0; d < D; d++) {
    const i = dynNodes[d];
    dOwn[d] = own[i];
    dKidSum[d] = kidSum[i];
    dBase[d] = isBase[i];
    if (!isBase[i]) classDyn[classOf[i]].push(d);
    const p = pathParent[i];
    if (!isBase[i] && p >= 0 && live(p) && !tied(i, p)) dParent[d] = dynId[p];
  }

  return {
    G, groupStart, poolSize: Int32Array.from(coupled, (g) => g.pool.length),
    baseOpened: Int32Array.from(baseOpened.sort((a, b) => a - b), (i) => groupOf[i]),
    ...csr('open', opens), startClass,
    K, classConst, ...csr('classDyn', classDyn), succStart, succList,
    D, dOwn, dKidSum, dParent, dBase, fixedCost,
  };
}

// The closure nodes' classes, from the graph the closure walks follow (path
// children, or a disjunctive node's local choice, and dependency targets; base
// nodes are not entered), in time linear in that graph:
//
// * the strongly connected parts (dependency cycles) are found with Tarjan's
//   algorithm; all nodes of one lie in the same closures;
// * in topological order, a part holding a member starts a class; any other
//   part joins the class of its predecessors when they are all in one, and
//   otherwise the class keyed by its predecessors' classes (parts with the
//   same predecessor classes lie in the same closures); the classes of all
//   of one group's members count there as one class standing for the group.
//
// Every node of a class thus lies in the same closures (the partition may be
// finer than "same set of closures", which costs search time, never
// correctness). Edges between classes run from the predecessor classes into
// the class they key or start, so they form a DAG whose creation order `topo`
// is topological. Classes are numbered by their first node, so the numbers do
// not depend on node indices elsewhere. Returns classOf per node (-1: in no
// closure), the class count K, the class edges as CSR and topo.
function closureClasses(ix, open, isBase, members, memberGroup) {
  const { N, pkStart, pkList, disjunctive, depStart, depList } = ix;
  const pathCount = (i) => (disjunctive[i] ? (open[i] >= 0 ? 1 : 0) : pkStart[i + 1] - pkStart[i]);
  const degree = (i) => pathCount(i) + depStart[i + 1] - depStart[i];
  const succ = (i, e) => {
    const n = pathCount(i);
    if (e < n) return disjunctive[i] ? open[i] : pkList[pkStart[i] + e];
    return depList[depStart[i] + e - n];
  };

  // Tarjan, iteratively: parts come out sinks first (reverse topological order).
  const order = new Int32Array(N).fill(-1);
  const low = new Int32Array(N);
  const partOf = new Int32Array(N).fill(-1);
  const stack = [];
  const frames = [];
  const cursor = [];
  let visited = 0;
  let parts = 0;
  for (const m of members) {
    if (isBase[m] || order[m] >= 0) continue;
    order[m] = low[m] = visited++;
    stack.push(m);
    frames.push(m);
    cursor.push(0);
    while (frames.length) {
      const top = frames.length - 1;
      const v = frames[top];
      const e = cursor[top];
      if (e < degree(v)) {
        cursor[top] = e + 1;
        const w = succ(v, e);
        if (isBase[w]) continue;
        if (order[w] < 0) {
          order[w] = low[w] = visited++;
          stack.push(w);
          frames.push(w);
          cursor.push(0);
        } else if (partOf[w] < 0 && order[w] < low[v]) low[v] = order[w];
        continue;
      }
      frames.pop();
      cursor.pop();
      if (low[v] === order[v]) {
        let w;
        do { w = stack.pop(); partOf[w] = parts; } while (w !== v);
        parts++;
      }
      if (frames.length) {
        const u = frames[frames.length - 1];
        if (low[v] < low[u]) low[u] = low[v];
      }
    }
  }

  // Edges between parts, as CSR by target part (sources may repeat).
  const inCount = new Int32Array(parts + 1);
  const hasStart = new Uint8Array(parts);
  for (const m of members) if (!isBase[m]) hasStart[partOf[m]] = 1;
  const forEachEdge = (fn) => {
    for (let v = 0; v < N; v++) {
      const pv = partOf[v];
      if (pv < 0) continue;
      for (let e = 0, n = degree(v); e < n; e++) {
        const w = succ(v, e);
        if (!isBase[w] && partOf[w] !== pv) fn(pv, partOf[w]);
      }
    }
  };
  forEachEdge((from, to) => { inCount[to + 1]++; });
  for (let p = 0; p < parts; p++) inCount[p + 1] += inCount[p];
  const fill = inCount.slice(0, parts);
  const inList = new Int32Array(inCount[parts]);
  forEachEdge((from, to) => { inList[fill[to]++] = from; });

  // The parts holding each group's members: once a part's predecessors
  // include the classes of all of them, they are replaced by one class
  // standing for the group (needed while any of them is), so that switching
  // between members that all lead to the part leaves it alone.
  const groups = memberGroup.length ? memberGroup[memberGroup.length - 1] + 1 : 0;
  const startsOf = Array.from({ length: groups }, () => []); // distinct parts, per group
  const groupsAt = new Map(); // start part -> groups with a member there (at most 14)
  const listedFor = new Int32Array(parts).fill(-1); // part -> last group that listed it
  for (let c = 0; c < members.length; c++) { // a group's members are consecutive
    if (isBase[members[c]]) continue;
    const p = partOf[members[c]];
    const g = memberGroup[c];
    if (listedFor[p] === g) continue;
    listedFor[p] = g;
    startsOf[g].push(p);
    if (!groupsAt.has(p)) groupsAt.set(p, []);
    groupsAt.get(p).push(g);
  }
  const groupClass = new Int32Array(groups).fill(-1);
  const hits = new Int32Array(groups);
  const hitStamp = new Int32Array(groups).fill(-1);

  // Classes in topological order (highest part number first).
  const classOfPart = new Int32Array(parts);
  const startGroups = []; // class -> groups it starts (start classes only)
  const byKey = new Map();
  const seen = new Int32Array(parts + groups).fill(-1); // class -> last part that listed it
  const edgeFrom = [];
  const edgeTo = [];
  let classes = 0;
  const newClass = (preds, starts) => {
    for (const from of preds) { edgeFrom.push(from); edgeTo.push(classes); }
    startGroups.push(starts);
    return classes++;
  };
  for (let p = parts - 1; p >= 0; p--) {
    let preds = [];
    const full = []; // groups whose start classes are all among preds
    for (let t = inCount[p]; t < inCount[p + 1]; t++) {
      const k = classOfPart[inList[t]];
      if (seen[k] === p) continue;
      seen[k] = p;
      preds.push(k);
      for (const g of startGroups[k] || []) {
        if (hitStamp[g] !== p) { hitStamp[g] = p; hits[g] = 0; }
        if (++hits[g] === startsOf[g].length && hits[g] > 1) full.push(g);
      }
    }
    const replaced = [];
    for (const g of full) {
      const starts = startsOf[g].map((q) => classOfPart[q]);
      if (!starts.every((k) => seen[k] === p)) continue; // some went to another group
      for (const k of starts) seen[k] = -1;
      if (groupClass[g] < 0) groupClass[g] = newClass(starts, null);
      if (seen[groupClass[g]] !== p) { seen[groupClass[g]] = p; replaced.push(groupClass[g]); }
    }
    if (replaced.length) preds = preds.filter((k) => seen[k] === p).concat(replaced);
    let k;
    if (!hasStart[p] && preds.length === 1) k = preds[0];
    else {
      let key = null;
      if (!hasStart[p]) {
        key = preds.sort((x, y) => x - y).join(',');
        k = byKey.get(key);
      }
      if (k === undefined) {
        k = newClass(preds, hasStart[p] ? groupsAt.get(p) : null);
        if (key !== null) byKey.set(key, k);
      }
    }
    classOfPart[p] = k;
  }

  // Numbered by first node; edges as CSR by source.
  const number = new Int32Array(classes).fill(-1);
  const classOf = new Int32Array(N).fill(-1);
  let K = 0;
  for (let i = 0; i < N; i++) {
    if (partOf[i] < 0) continue;
    const k = classOfPart[partOf[i]];
    if (number[k] < 0) number[k] = K++;
    classOf[i] = number[k];
  }
  for (let k = 0; k < classes; k++) if (number[k] < 0) number[k] = K++; // group classes without nodes
  const topo = Int32Array.from(number);
  const succStart = new Int32Array(K + 1);
  for (const from of edgeFrom) succStart[number[from] + 1]++;
  for (let k = 0; k < K; k++) succStart[k + 1] += succStart[k];
  const next = succStart.slice(0, K);
  const succList = new Int32Array(edgeFrom.length);
  for (let e = 0; e < edgeFrom.length; e++) succList[next[number[edgeFrom[e]]]++] = number[edgeTo[e]];
  return { classOf, K, succStart, succList, topo };
}

// A list of lists as CSR arrays {<name>Start, <name>List}.
function csr(name, lists) {
  const start = new Int32Array(lists.length + 1);
  let total = 0;
  for (let c = 0; c < lists.length; c++) { start[c] = total; total += lists[c].length; }
  start[lists.length] = total;
  const flat = new Int32Array(total);
  for (let c = 0; c < lists.length; c++) flat.set(lists[c], start[c]);
  return { [name + 'Start']: start, [name + 'List']: flat };
}

// Which closure each group contributes (-1: inactive) under an assignment:
// groups opened in base are active, and so are groups opened in the chosen
// closure of an active group. Computed afresh, so cyclic activation (groups
// opening each other) needs no special case.
function activeClosures(s, assignment, want, queue) {
  const { G, groupStart, baseOpened, openStart, openList } = s;
  for (let g = 0; g < G; g++) want[g] = -1;
  let qLen = 0;
  for (let t = 0; t < baseOpened.length; t++) {
    const g = baseOpened[t];
    if (want[g] < 0) { want[g] = groupStart[g] + assignment[g]; queue[qLen++] = g; }
  }
  for (let q = 0; q < qLen; q++) {
    const c = want[queue[q]];
    for (let t = openStart[c]; t < openStart[c + 1]; t++) {
      const h = openList[t];
      if (want[h] < 0) { want[h] = groupStart[h] + assignment[h]; queue[qLen++] = h; }
    }
  }
}

// Visits the assignments in odometer order (index 0 everywhere first, the
// last group fastest) and returns the first with the strictly smallest cost.
// evaluate(assignment, from) is told the first group that changed since the
// previous call (0 on the first call): groups before it kept their values.
function odometer(s, evaluate) {
  const { G, poolSize } = s;
  const assignment = new Int32Array(G);
  const best = new Int32Array(G);
  let bestCost = Infinity;
  let from = 0;
  for (;;) {
    const cost = evaluate(assignment, from);
    if (cost < bestCost) { bestCost = cost; best.set(assignment); }
    let g = G - 1;
    while (g >= 0) {
      if (++assignment[g] < poolSize[g]) break;
      assignment[g] = 0;
      g--;
    }
    if (g < 0) return best;
    from = g;
  }
}

// Full evaluation per assignment: the needed classes (a walk over the class
// edges from the active closures' classes), dynamic nodes and margins from
// scratch. Simple on purpose; it cross-checks the incremental search.
function searchFull(s) {
  const { G, K, D, startClass, succStart, succList, classConst, classDynStart, classDynList, dOwn, dKidSum, dParent, dBase, fixedCost } = s;
  const want = new Int32Array(G);
  const queue = new Int32Array(G);
  const seen = new Int32Array(K);
  const work = new Int32Array(K);
  const present = new Int32Array(D);
  const parts = new Int32Array(D);
  let stamp = 0;
  return odometer(s, (assignment) => {
    activeClosures(s, assignment, want, queue);
    stamp++;
    let cost = fixedCost;
    let n = 0;
    for (let d = 0; d < D; d++) if (dBase[d]) present[n++] = d;
    let top = 0;
    for (let g = 0; g < G; g++) {
      const k = want[g] < 0 ? -1 : startClass[want[g]];
      if (k >= 0 && seen[k] !== stamp) { seen[k] = stamp; work[top++] = k; }
    }
    while (top) {
      const k = work[--top];
      cost += classConst[k];
      for (let u = classDynStart[k]; u < classDynStart[k + 1]; u++) present[n++] = classDynList[u];
      for (let e = succStart[k]; e < succStart[k + 1]; e++) {
        const j = succList[e];
        if (seen[j] !== stamp) { seen[j] = stamp; work[top++] = j; }
      }
    }
    for (let t = 0; t < n; t++) parts[present[t]] = dKidSum[present[t]];
    for (let t = 0; t < n; t++) {
      const d = present[t];
      if (dParent[d] >= 0) parts[dParent[d]] += dOwn[d];
    }
    for (let t = 0; t < n; t++) {
      const d = present[t];
      if (dOwn[d] > parts[d]) cost += dOwn[d] - parts[d];
    }
    return cost;
  });
}

// Incremental evaluation: per class, how many active closures start in it
// plus how many needed classes have an edge into it (needed while above 0);
// per dynamic node, whether it is needed and the own costs of its needed loose
// children; and the running total. Between assignments the closures that
// changed are put in first and taken out after, so a class that both the old
// and the new closure reach (a shared module) is never switched off and on.
function searchIncremental(s) {
  const { G, K, D, groupStart, poolSize, openStart, startClass, succStart, succList, classConst, classDynStart, classDynList, dOwn, dKidSum, dParent, dBase, fixedCost } = s;
  const count = new Int32Array(K);
  const work = new Int32Array(K);
  const on = Uint8Array.from(dBase);
  const parts = Int32Array.from(dKidSum);
  const applied = new Int32Array(G).fill(-1);
  const want = new Int32Array(G);
  const queue = new Int32Array(G);
  let cost = fixedCost;
  for (let d = 0; d < D; d++) if (on[d] && dOwn[d] > parts[d]) cost += dOwn[d] - parts[d];

  // Switch class k0 on (delta 1) or off (delta -1), and every class that
  // follows it; after every single node the running cost equals the margin
  // sum over the needed nodes. Within one direction a class switches at most
  // once, so `work` never holds more than K classes.
  const spread = (k0, delta) => {
    const until = delta > 0 ? 1 : 0;
    let top = 0;
    work[top++] = k0;
    while (top) {
      const k = work[--top];
      cost += delta * classConst[k];
      for (let u = classDynStart[k]; u < classDynStart[k + 1]; u++) {
        const d = classDynList[u];
        on[d] = delta > 0 ? 1 : 0;
        cost += delta * (dOwn[d] > parts[d] ? dOwn[d] - parts[d] : 0);
        const p = dParent[d];
        if (p < 0) continue;
        if (on[p]) cost -= dOwn[p] > parts[p] ? dOwn[p] - parts[p] : 0;
        parts[p] += delta * dOwn[d];
        if (on[p]) cost += dOwn[p] > parts[p] ? dOwn[p] - parts[p] : 0;
      }
      for (let e = succStart[k]; e < succStart[k + 1]; e++) {
        const j = succList[e];
        count[j] += delta;
        if (count[j] === until) work[top++] = j;
      }
    }
  };
  const shift = (c, delta) => {
    const k = startClass[c];
    if (k < 0) return;
    count[k] += delta;
    if (count[k] === (delta > 0 ? 1 : 0)) spread(k, delta);
  };
  // Activation can only change when a group that opens others changed;
  // otherwise just the changed groups that are active switch closures.
  const reopens = new Uint8Array(G + 1); // some group g.. opens another
  for (let g = G - 1; g >= 0; g--) {
    const c0 = groupStart[g];
    reopens[g] = reopens[g + 1] | (openStart[c0 + poolSize[g]] > openStart[c0] ? 1 : 0);
  }
  return odometer(s, (assignment, from) => {
    if (from === 0 || reopens[from]) activeClosures(s, assignment, want, queue);
    else for (let g = from; g < G; g++) if (want[g] >= 0) want[g] = groupStart[g] + assignment[g];
    const first = from === 0 || reopens[from] ? 0 : from;
    for (let g = first; g < G; g++) if (applied[g] !== want[g] && want[g] >= 0) shift(want[g], 1);
    for (let g = first; g < G; g++) {
      if (applied[g] === want[g]) continue;
      if (applied[g] >= 0) shift(applied[g], -1);
      applied[g] = want[g];
    }
    return cost;
  });
}

// The search input as one string: every field of the prepared problem (the
// searches read nothing else), so equal keys give equal answers. Node indices
// do not occur in it (classes and dynamic nodes are numbered compactly), so
// edits elsewhere in the text keep the key.
function searchKey(s) {
  const parts = [];
  for (const name of Object.keys(s)) {
    const v = s[name];
    parts.push(name + '=' + (typeof v === 'number' ? v : v.join(',')));
  }
  return parts.join(';');
}

// Recent search answers by key. The facade already reuses whole runs for an
// unchanged text; this also spares the exponential part when the text
// changed but the search did not (a status or label edit elsewhere, a
// comment). Bounded in entries and key length (at most ~0.8 M characters in
// all: QuickJS caps its heap); the oldest entry goes first.
const SEARCH_MEMO = new Map();
const MEMO_ENTRIES = 8;
const MEMO_KEY_CHARS = 100000;

function memoisedSearch(s) {
  const key = searchKey(s);
  const known = SEARCH_MEMO.get(key);
  if (known) {
    SEARCH_MEMO.delete(key); // refresh its age
    SEARCH_MEMO.set(key, known);
    return known;
  }
  const best = searchIncremental(s);
  if (key.length <= MEMO_KEY_CHARS) {
    if (SEARCH_MEMO.size >= MEMO_ENTRIES) SEARCH_MEMO.delete(SEARCH_MEMO.keys().next().value);
    SEARCH_MEMO.set(key, best);
  }
  return best;
}

// method: 'auto' (incremental, memoised), 'incremental', 'full' or
// 'uncollapsed' (incremental without static parts).
function searchCoupled(ix, groups, method) {
  const s = prepareSearch(ix, groups, method !== 'uncollapsed');
  if (method === 'full') return searchFull(s);
  if (method === 'auto') return memoisedSearch(s);
  return searchIncremental(s);
}

// The plan by a search method, with the size of the search for tests.
function cheapPlan(roots, method) {
  const ix = buildPlanIndex(roots);
  const groups = buildGroups(ix);
  const { coupled } = groups;
  const assignments = assignmentCount(coupled);
  const search = { groups: coupled.length, assignments };
  if (coupled.length === 0 || assignments > EXACT_LIMIT) {
    return { set: setFromMembers(ix, neededFor(ix, groups, null)), exact: coupled.length === 0, search };
  }
  const best = method === 'plain' ? searchPlain(ix, groups) : searchCoupled(ix, groups, method);
  return { set: setFromMembers(ix, neededFor(ix, groups, best)), exact: true, search };
}

// §13.2 step 8 literally: needed() and costOf() for every assignment, with
// its own odometer loop, so that it shares as little as possible with the
// searches it checks.
function searchPlain(ix, groups) {
  const { coupled } = groups;
  const G = coupled.length;
  const assignment = new Int32Array(G);
  let best = null;
  let bestCost = Infinity;
  for (;;) {
    const inSet = neededFor(ix, groups, assignment);
    const list = [];
    for (let i = 0; i < ix.N; i++) if (inSet[i]) list.push(i);
    const cost = costOfMembers(ix, list, inSet);
    if (cost < bestCost) { bestCost = cost; best = assignment.slice(); }
    let g = G - 1;
    while (g >= 0) {
      assignment[g]++;
      if (assignment[g] < coupled[g].pool.length) break;
      assignment[g] = 0;
      g--;
    }
    if (g < 0) return best;
  }
}

export function computeCheapPlan(roots) {
  const { set, exact } = cheapPlan(roots, 'auto');
  return { set, exact };
}

export function computeCheapSet(roots) {
  return computeCheapPlan(roots).set;
}

// Test aid (not upstream API): the same plan by a chosen method, so tests can
// compare the optimised searches with plain enumeration. method: 'plain'
// (needed()+costOf() per assignment), 'full', 'incremental', 'uncollapsed'
// or 'auto' (what computeCheapPlan uses). The result also carries
// search: {groups, assignments} (assignments stops counting past the limit).
export function _cheapPlanBy(roots, method) {
  if (!['plain', 'full', 'incremental', 'uncollapsed', 'auto'].includes(method)) {
    throw new Error('invalid_argument: unknown method ' + method);
  }
  return cheapPlan(roots, method);
}

// ---------------------------------------------------------------- stations and loads (§13.3, §14)

function isPathChild(k) {
  return !isDiscarded(k) && (!k.optional || isStarted(k));
}

export function assigneeLoads(roots, set) {
  const { nodes, parent } = flatten(roots);
  const N = nodes.length;
  // Children before parents, in one pass: set membership once per node;
  // openBelow[i]: some descendant is in the set and not done; parts[i]: the
  // summed ownCost of i's path children in the set. A needed node's margin
  // is max(0, ownCost(n) − parts).
  const inSet = new Uint8Array(N);
  const openBelow = new Uint8Array(N);
  const parts = new Float64Array(N);
  for (let i = N - 1; i >= 0; i--) {
    const n = nodes[i];
    if (set.has(n)) inSet[i] = 1;
    const p = parent[i];
    if (p < 0) continue;
    if (openBelow[i] || (inSet[i] && !isDone(n))) openBelow[p] = 1;
    if (inSet[i] && isPathChild(n)) parts[p] += ownCost(n);
  }
  const owners = new Array(N);
  const loads = new Map();
  const stations = new Map();
  let total = 0;
  let totalStations = 0;
  for (let i = 0; i < N; i++) {
    const n = nodes[i];
    const tags = n.tags || EMPTY;
    owners[i] = tags.length ? tags : (parent[i] >= 0 ? owners[parent[i]] : EMPTY);
    if (!inSet[i]) continue;
    const own = owners[i];
    const m = Math.max(0, ownCost(n) - parts[i]);
    total += m;
    if (m > 0 && own.length) {
      const share = m / own.length;
      for (const t of own) loads.set(t, (loads.get(t) || 0) + share);
    }
    if (!isDone(n) && !openBelow[i]) {
      totalStations++;
      for (const t of own) stations.set(t, (stations.get(t) || 0) + 1);
    }
  }
  return { loads, total, stations, totalStations };
}

export function overloadedAssignee(roots, set) {
  const { loads, total, stations, totalStations } = assigneeLoads(roots, set);
  if (loads.size < 2 || total <= 0) return null;
  let tag = null;
  let load = -Infinity;
  for (const [t, l] of loads) if (l > load) { tag = t; load = l; }
  if (!(load * 2 > total)) return null;
  return { tag, share: Math.round(load / total * 100), stations: stations.get(tag) || 0, totalStations };
}

// ---------------------------------------------------------------- effective status (§10.2)

export function progressRank(n) {
  const k = statusKey(n);
  return (k && PROGRESS_RANK[k] !== undefined) ? PROGRESS_RANK[k] : 0;
}

// eff(n) = min rank over everything reachable through deps (the fixed point
// of §10.2). Computed by reverse search from the lowest ranks upwards: the
// first rank that reaches a node is its minimum. Only nodes on a dependency
// edge take part: any other node reaches nothing but itself, so its eff is
// its own rank and it never lowers another node.
export function effectiveStatus(roots) {
  // One walk collects the nodes, the ones with deps and the ids they name;
  // a second looks at ids only if there are any. Every pass over a large
  // tree costs QuickJS cache misses on each node.
  const nodes = [];
  const withDeps = [];
  const wanted = new Set();
  const stack = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push(roots[i]);
  while (stack.length) {
    const n = stack.pop();
    const deps = n.deps;
    if (deps && deps.length) {
      withDeps.push(nodes.length);
      for (const d of deps) wanted.add(d);
    }
    nodes.push(n);
    const kids = n.children;
    if (kids) for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
  }
  if (!wanted.size) return new Map();
  const N = nodes.length;
  const byId = new Map();
  for (let i = 0; i < N; i++) {
    const id = nodes[i].id;
    if (id != null && wanted.has(id) && !byId.has(id)) byId.set(id, i);
  }
  const reverse = new Array(N);
  const member = new Uint8Array(N);
  for (const i of withDeps) {
    for (const d of nodes[i].deps) {
      const t = byId.get(d);
      if (t === undefined) continue;
      (reverse[t] || (reverse[t] = [])).push(i);
      member[t] = 1;
      member[i] = 1;
    }
  }
  const rank = new Int8Array(N);
  const bucket = [[], [], [], [], [], []];
  for (let i = 0; i < N; i++) {
    if (!member[i]) continue;
    rank[i] = progressRank(nodes[i]);
    bucket[rank[i]].push(i);
  }
  const eff = new Int8Array(N).fill(-1);
  for (let r = 0; r < 6; r++) {
    const work = [];
    for (const i of bucket[r]) if (eff[i] < 0) { eff[i] = r; work.push(i); }
    while (work.length) {
      const i = work.pop();
      for (const s of reverse[i] || EMPTY) if (eff[s] < 0) { eff[s] = r; work.push(s); }
    }
  }
  const out = new Map();
  for (let i = 0; i < N; i++) if (member[i] && eff[i] < rank[i]) out.set(nodes[i], RANK_KEYS[eff[i]]);
  return out;
}

// ---------------------------------------------------------------- identity, folding, tags (§9, §16, §19)

// ' > ' + label per level, '#i' for the i-th repeat of a label among siblings.
export function nodeKeys(roots) {
  const keys = new Map();
  const stack = [{ list: roots, prefix: '' }];
  while (stack.length) {
    const { list, prefix } = stack.pop();
    const seen = new Map();
    for (const n of list) {
      const count = seen.get(n.label) || 0;
      seen.set(n.label, count + 1);
      const key = prefix + ' > ' + n.label + (count ? '#' + count : '');
      keys.set(n, key);
      if (kidsOf(n).length) stack.push({ list: kidsOf(n), prefix: key });
    }
  }
  return keys;
}

export function initialCollapsed(roots, rescueFocus = true) {
  const { nodes, parent } = flatten(roots);
  const set = new Set();
  const targets = [];
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    if (n.fold === '>') set.add(n);
    if (n.fold === '<' || (rescueFocus && n.focus)) targets.push(i);
  }
  for (const t of targets) {
    const path = [];
    for (let i = t; i >= 0; i = parent[i]) path.push(i);
    path.reverse();
    for (let d = 0; d < path.length - 1; d++) {
      const anc = nodes[path[d]];
      if (!set.has(anc)) continue;
      set.delete(anc);
      const onPath = nodes[path[d + 1]];
      for (const k of kidsOf(anc)) if (k !== onPath && kidsOf(k).length) set.add(k);
    }
    set.delete(nodes[t]);
  }
  return set;
}

function ownSlug(n) {
  const marks = n.marks;
  if (!marks || !marks.length) return null;
  for (const m of marks) {
    if (m.startsWith('taiga.') && m.length > 'taiga.'.length) return m.slice('taiga.'.length);
  }
  return null;
}

export function taigaSlugs(roots) {
  if (!anyNode(roots, ownSlug)) return new Map();
  const { nodes, parent } = flatten(roots);
  const slugs = new Array(nodes.length);
  const map = new Map();
  for (let i = 0; i < nodes.length; i++) {
    const slug = ownSlug(nodes[i]) || (parent[i] >= 0 ? slugs[parent[i]] : null);
    slugs[i] = slug;
    if (slug) map.set(nodes[i], slug);
  }
  return map;
}

export function allTags(roots) {
  const seen = new Set();
  for (const n of flatten(roots).nodes) for (const t of n.tags || EMPTY) seen.add(t);
  return Array.from(seen);
}

export function freshProdSet(prevRoots, currRoots) {
  const fresh = new Set();
  if (!prevRoots) return fresh;
  const prevProd = new Set();
  for (const [n, key] of nodeKeys(prevRoots)) if (statusKey(n) === 'prod') prevProd.add(key);
  const currKeys = nodeKeys(currRoots);
  for (const n of flatten(currRoots).nodes) {
    if (statusKey(n) === 'prod' && !prevProd.has(currKeys.get(n))) fresh.add(n);
  }
  return fresh;
}
