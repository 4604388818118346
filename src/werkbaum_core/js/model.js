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
function flatten(roots) {
  const nodes = [];
  const parent = [];
  const stack = [];
  const parentStack = [];
  for (let i = roots.length - 1; i >= 0; i--) {
    stack.push(roots[i]);
    parentStack.push(-1);
  }
  while (stack.length) {
    const n = stack.pop();
    const p = parentStack.pop();
    const idx = nodes.length;
    nodes.push(n);
    parent.push(p);
    const kids = kidsOf(n);
    for (let i = kids.length - 1; i >= 0; i--) {
      stack.push(kids[i]);
      parentStack.push(idx);
    }
  }
  return { nodes, parent };
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

// Index-based view of the tree so that the coupled-group enumeration works on
// typed arrays instead of Maps and Sets.
function buildPlanIndex(roots) {
  const { nodes, parent } = flatten(roots);
  const N = nodes.length;
  const index = new Map();
  for (let i = 0; i < N; i++) index.set(nodes[i], i);

  const byId = new Map();
  const referenced = new Set();
  for (let i = 0; i < N; i++) {
    const n = nodes[i];
    if (n.id != null && !byId.has(n.id)) byId.set(n.id, i);
    for (const d of n.deps || EMPTY) referenced.add(d);
  }

  // touches(n): own deps, a referenced id, or any descendant touching.
  // Reverse pre-order visits every child before its parent.
  const touches = new Uint8Array(N);
  for (let i = 0; i < N; i++) {
    const n = nodes[i];
    if ((n.deps && n.deps.length) || (n.id != null && referenced.has(n.id))) touches[i] = 1;
  }
  for (let i = N - 1; i > 0; i--) {
    if (touches[i] && parent[i] >= 0) touches[parent[i]] = 1;
  }

  const own = new Int32Array(N);
  for (let i = 0; i < N; i++) own[i] = ownCost(nodes[i]);

  // Path children, flattened: pkStart[i] .. pkStart[i+1].
  const pkStart = new Int32Array(N + 1);
  const pkList = [];
  const disjunctive = new Uint8Array(N);
  for (let i = 0; i < N; i++) {
    pkStart[i] = pkList.length;
    const pk = pathChildren(nodes[i]);
    for (const k of pk) pkList.push(index.get(k));
    if (pk.length > 1 && gateOf(pk) !== 'and') disjunctive[i] = 1;
  }
  pkStart[N] = pkList.length;

  // Dependency targets by first assignment; discarded targets are never pulled.
  const depStart = new Int32Array(N + 1);
  const depList = [];
  for (let i = 0; i < N; i++) {
    depStart[i] = depList.length;
    for (const d of nodes[i].deps || EMPTY) {
      const t = byId.get(d);
      if (t !== undefined && !isDiscarded(nodes[t])) depList.push(t);
    }
  }
  depStart[N] = depList.length;

  const rootIdx = roots.map((r) => index.get(r));
  return {
    nodes, N, own, touches, pkStart, pkList: Int32Array.from(pkList), disjunctive,
    depStart, depList: Int32Array.from(depList), rootIdx, anyDeps: referenced.size > 0,
  };
}

// Choice groups in pre-order; the local choice is the first pool member with
// the strictly smallest own cost (ties to the first).
function buildGroups(ix) {
  const { N, nodes, own, touches, pkStart, pkList, disjunctive, anyDeps } = ix;
  const localChoice = new Int32Array(N).fill(-1);
  const coupled = []; // {owner, pool: Int32Array}
  const groupOf = new Int32Array(N).fill(-1);
  for (let i = 0; i < N; i++) {
    if (!disjunctive[i]) continue;
    const kids = [];
    for (let p = pkStart[i]; p < pkStart[i + 1]; p++) kids.push(pkList[p]);
    const realized = kids.filter((k) => isRealized(nodes[k]));
    const pool = realized.length ? realized : kids;
    let best = pool[0];
    for (const k of pool) if (own[k] < own[best]) best = k;
    localChoice[i] = best;
    if (anyDeps && pool.length > 1 && pool.some((k) => touches[k])) {
      groupOf[i] = coupled.length;
      coupled.push({ owner: i, pool: Int32Array.from(pool) });
    }
  }
  return { localChoice, coupled, groupOf };
}

// needed(choice) of §13.2 step 5 as a reachability walk. `choose(i)` returns
// the member for a disjunctive node i, or -1 to stop there (used to leave
// coupled groups open). `stop` (optional) marks nodes not to enter.
function reach(ix, starts, choose, inSet, stop, visitOwner) {
  const { pkStart, pkList, disjunctive, depStart, depList } = ix;
  const out = [];
  const work = starts.slice();
  while (work.length) {
    const i = work.pop();
    if (inSet[i] || (stop && stop[i])) continue;
    inSet[i] = 1;
    out.push(i);
    if (disjunctive[i]) {
      const c = choose(i);
      if (c >= 0) work.push(c); else if (visitOwner) visitOwner(i);
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

function localSet(ix, groups) {
  const inSet = new Uint8Array(ix.N);
  reach(ix, ix.rootIdx, (i) => groups.localChoice[i], inSet, null, null);
  return inSet;
}

// Exhaustive search over coupled assignments (§13.2 step 8). Every
// assignment's needed set is R = base ∪ closures of the chosen members of the
// groups whose owner is in R, where base is the closure from the roots with
// coupled groups left open and each member's closure (outside base) is
// precomputed. Only nodes in base ∪ U (U = all member closures) can change
// their margin, so the rest is priced once. Results equal plain
// needed()+costOf() enumeration; _cheapPlanBy exists to test exactly that.
function prepareSearch(ix, groups) {
  const { N, own, pkStart, pkList } = ix;
  const { localChoice, coupled, groupOf } = groups;
  const G = coupled.length;
  const openChoice = (i) => (groupOf[i] >= 0 ? -1 : localChoice[i]);

  const isBase = new Uint8Array(N);
  const baseOwners = [];
  const baseList = reach(ix, ix.rootIdx, openChoice, isBase, null, (i) => baseOwners.push(groupOf[i]));

  // Closures of every member, not entering base (base is closed already).
  const inU = new Uint8Array(N);
  const memberNodes = []; // [g][j] -> Int32Array of node indices
  const memberOwners = []; // [g][j] -> Int32Array of coupled groups opened inside
  const scratch = new Uint8Array(N);
  for (let g = 0; g < G; g++) {
    const perNodes = [];
    const perOwners = [];
    for (const m of coupled[g].pool) {
      const owners = [];
      const list = reach(ix, [m], openChoice, scratch, isBase, (i) => owners.push(groupOf[i]));
      for (const i of list) { scratch[i] = 0; inU[i] = 1; }
      perNodes.push(Int32Array.from(list));
      perOwners.push(Int32Array.from(owners));
    }
    memberNodes.push(perNodes);
    memberOwners.push(perOwners);
  }

  // Per node: own cost of path children always present (base), the path
  // children that may or may not be present (in U), and for U nodes the
  // parent whose margin they lower.
  const baseKidSum = new Int32Array(N);
  const uKidStart = new Int32Array(N + 1);
  const uKids = [];
  const pathParent = new Int32Array(N).fill(-1);
  for (let i = 0; i < N; i++) {
    uKidStart[i] = uKids.length;
    for (let p = pkStart[i]; p < pkStart[i + 1]; p++) {
      const k = pkList[p];
      if (isBase[k]) baseKidSum[i] += own[k];
      else if (inU[k]) { uKids.push(k); pathParent[k] = i; }
    }
  }
  uKidStart[N] = uKids.length;

  let fixedCost = 0;
  const variableBase = [];
  for (const i of baseList) {
    if (uKidStart[i + 1] > uKidStart[i]) variableBase.push(i);
    else if (own[i] > baseKidSum[i]) fixedCost += own[i] - baseKidSum[i];
  }

  return {
    N, G, own, coupled, isBase, baseOwners, memberNodes, memberOwners, baseKidSum,
    uKidStart, uKids: Int32Array.from(uKids), pathParent, fixedCost, variableBase,
  };
}

// Visits assignments in odometer order (index 0 everywhere first, the last
// group fastest) and calls step(g) for every group whose value changed.
function odometer(s, onChange, evaluate) {
  const { G, coupled } = s;
  const assignment = new Int32Array(G);
  const best = new Int32Array(G);
  let bestCost = Infinity;
  for (;;) {
    const cost = evaluate(assignment);
    if (cost < bestCost) { bestCost = cost; best.set(assignment); }
    let g = G - 1;
    while (g >= 0) {
      const before = assignment[g];
      assignment[g] = before + 1 < coupled[g].pool.length ? before + 1 : 0;
      onChange(g, before, assignment[g]);
      if (assignment[g] !== 0) break;
      g--;
    }
    if (g < 0) return best;
  }
}

// Full evaluation per assignment: rebuild R from scratch.
function searchFull(s) {
  const { N, G, own, baseOwners, memberNodes, memberOwners, baseKidSum, uKidStart, uKids, fixedCost, variableBase } = s;
  const mark = new Int32Array(N);
  const active = new Int32Array(G);
  const queue = new Int32Array(G);
  const extra = new Int32Array(N);
  let stamp = 0;
  const margin = (i) => {
    let parts = baseKidSum[i];
    for (let p = uKidStart[i]; p < uKidStart[i + 1]; p++) if (mark[uKids[p]] === stamp) parts += own[uKids[p]];
    return own[i] > parts ? own[i] - parts : 0;
  };
  const evaluate = (assignment) => {
    stamp++;
    let qLen = 0;
    for (const g of baseOwners) if (active[g] !== stamp) { active[g] = stamp; queue[qLen++] = g; }
    let xLen = 0;
    for (let q = 0; q < qLen; q++) {
      const g = queue[q];
      const list = memberNodes[g][assignment[g]];
      for (let t = 0; t < list.length; t++) {
        const v = list[t];
        if (mark[v] !== stamp) { mark[v] = stamp; extra[xLen++] = v; }
      }
      const opened = memberOwners[g][assignment[g]];
      for (let t = 0; t < opened.length; t++) {
        const h = opened[t];
        if (active[h] !== stamp) { active[h] = stamp; queue[qLen++] = h; }
      }
    }
    let cost = fixedCost;
    for (let t = 0; t < variableBase.length; t++) cost += margin(variableBase[t]);
    for (let t = 0; t < xLen; t++) cost += margin(extra[t]);
    return cost;
  };
  return odometer(s, () => {}, evaluate);
}

// Group g can open group h when h's owner lies in one of g's member
// closures. Reference counting below is exact only if that relation has no
// cycle (otherwise groups could keep each other alive without support).
function activationIsAcyclic(s) {
  const { G, memberOwners } = s;
  const state = new Uint8Array(G); // 0 new, 1 on stack, 2 done
  for (let start = 0; start < G; start++) {
    if (state[start]) continue;
    const stack = [[start, 0]];
    state[start] = 1;
    while (stack.length) {
      const top = stack[stack.length - 1];
      const next = [];
      for (const list of memberOwners[top[0]]) for (const h of list) next.push(h);
      if (top[1] >= next.length) { state[top[0]] = 2; stack.pop(); continue; }
      const h = next[top[1]++];
      if (state[h] === 1) return false;
      if (state[h] === 0) { state[h] = 1; stack.push([h, 0]); }
    }
  }
  return true;
}

// Incremental evaluation: keep per-node reference counts of active member
// closures and the running cost; a change of one group only touches the
// closures it removes and adds.
function searchIncremental(s) {
  const { N, G, own, coupled, isBase, baseOwners, memberNodes, baseKidSum, uKids, pathParent, fixedCost, variableBase } = s;
  const ownerGroup = new Int32Array(N).fill(-1);
  for (let g = 0; g < G; g++) if (!isBase[coupled[g].owner]) ownerGroup[coupled[g].owner] = g;
  const count = new Int32Array(N);
  const parts = Int32Array.from(baseKidSum);
  const active = new Uint8Array(G);
  const assignment = new Int32Array(G);
  const inR = (i) => isBase[i] === 1 || count[i] > 0;
  const contrib = (i) => (own[i] > parts[i] ? own[i] - parts[i] : 0);
  let cost = fixedCost;
  for (const i of variableBase) cost += contrib(i);

  // Membership of k flips; adjust its own margin and its path parent's.
  const flip = (k, entering) => {
    cost += entering ? contrib(k) : -contrib(k);
    const p = pathParent[k];
    if (p >= 0) {
      const before = inR(p) ? contrib(p) : 0;
      parts[p] += entering ? own[k] : -own[k];
      cost += (inR(p) ? contrib(p) : 0) - before;
    }
    const h = ownerGroup[k];
    if (h >= 0) setActive(h, entering);
  };
  const addClosure = (g, delta) => {
    const list = memberNodes[g][assignment[g]];
    for (let t = 0; t < list.length; t++) {
      const v = list[t];
      count[v] += delta;
      if (delta > 0 ? count[v] === 1 : count[v] === 0) flip(v, delta > 0);
    }
  };
  function setActive(g, on) {
    if (!!active[g] === on) return;
    active[g] = on ? 1 : 0;
    addClosure(g, on ? 1 : -1);
  }
  for (const g of baseOwners) setActive(g, true);

  const onChange = (g, before, after) => {
    if (active[g]) {
      assignment[g] = before;
      addClosure(g, -1);
      assignment[g] = after;
      // g stays active: its owner is in base or opened by groups that do not
      // depend on g (the activation relation is acyclic here).
      addClosure(g, 1);
    } else {
      assignment[g] = after;
    }
  };
  return odometer(s, onChange, () => cost);
}

function searchCoupled(ix, groups, method = 'auto') {
  const s = prepareSearch(ix, groups);
  const incremental = method === 'incremental' || (method === 'auto' && activationIsAcyclic(s));
  const best = incremental ? searchIncremental(s) : searchFull(s);
  const { coupled, localChoice } = groups;
  const chosen = new Int32Array(ix.N).fill(-1);
  for (let g = 0; g < coupled.length; g++) chosen[coupled[g].owner] = coupled[g].pool[best[g]];
  const inSet = new Uint8Array(ix.N);
  reach(ix, ix.rootIdx, (i) => (chosen[i] >= 0 ? chosen[i] : localChoice[i]), inSet, null, null);
  return inSet;
}

export function computeCheapPlan(roots) {
  const ix = buildPlanIndex(roots);
  const groups = buildGroups(ix);
  const { coupled } = groups;
  if (coupled.length === 0) return { set: setFromMembers(ix, localSet(ix, groups)), exact: true };
  let product = 1;
  for (const g of coupled) {
    product *= g.pool.length;
    if (product > EXACT_LIMIT) break;
  }
  if (product > EXACT_LIMIT) return { set: setFromMembers(ix, localSet(ix, groups)), exact: false };
  return { set: setFromMembers(ix, searchCoupled(ix, groups)), exact: true };
}

export function computeCheapSet(roots) {
  return computeCheapPlan(roots).set;
}

// Test aid (not upstream API): the same plan by a chosen method, so tests can
// compare the optimised search with plain enumeration. method: 'plain'
// (needed()+costOf() per assignment), 'full', 'incremental' or 'auto'.
export function _cheapPlanBy(roots, method) {
  const ix = buildPlanIndex(roots);
  const groups = buildGroups(ix);
  const { coupled, localChoice } = groups;
  let product = 1;
  for (const g of coupled) { product *= g.pool.length; if (product > EXACT_LIMIT) break; }
  if (product > EXACT_LIMIT) return { set: setFromMembers(ix, localSet(ix, groups)), exact: false };
  if (method !== 'plain') return { set: setFromMembers(ix, searchCoupled(ix, groups, method)), exact: true };
  const G = coupled.length;
  const assignment = new Int32Array(G);
  const chosen = new Int32Array(ix.N).fill(-1);
  let bestCost = Infinity;
  let bestSet = null;
  for (;;) {
    for (let g = 0; g < G; g++) chosen[coupled[g].owner] = coupled[g].pool[assignment[g]];
    const inSet = new Uint8Array(ix.N);
    const list = reach(ix, ix.rootIdx, (i) => (chosen[i] >= 0 ? chosen[i] : localChoice[i]), inSet, null, null);
    const cost = costOfMembers(ix, list, inSet);
    if (cost < bestCost) { bestCost = cost; bestSet = inSet; }
    let g = G - 1;
    while (g >= 0) {
      assignment[g]++;
      if (assignment[g] < coupled[g].pool.length) break;
      assignment[g] = 0;
      g--;
    }
    if (g < 0) break;
  }
  return { set: setFromMembers(ix, bestSet), exact: true };
}

// ---------------------------------------------------------------- stations and loads (§13.3, §14)

// openBelow[i]: some descendant is in the set and not done.
function openBelowFlags(nodes, parent, set) {
  const openBelow = new Uint8Array(nodes.length);
  for (let i = nodes.length - 1; i >= 0; i--) {
    const p = parent[i];
    if (p < 0) continue;
    if (openBelow[i] || (set.has(nodes[i]) && !isDone(nodes[i]))) openBelow[p] = 1;
  }
  return openBelow;
}

function isPathChild(k) {
  return !isDiscarded(k) && (!k.optional || isStarted(k));
}

// max(0, ownCost(n) − Σ ownCost(k) for k ∈ pathChildren(n) ∩ set), without
// allocating the child list (this runs once per needed node).
function marginIn(n, set) {
  let parts = 0;
  const kids = kidsOf(n);
  for (let i = 0; i < kids.length; i++) {
    const k = kids[i];
    if (set.has(k) && isPathChild(k)) parts += ownCost(k);
  }
  return Math.max(0, ownCost(n) - parts);
}

export function assigneeLoads(roots, set) {
  const { nodes, parent } = flatten(roots);
  const openBelow = openBelowFlags(nodes, parent, set);
  const owners = new Array(nodes.length);
  const loads = new Map();
  const stations = new Map();
  let total = 0;
  let totalStations = 0;
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    const tags = n.tags || EMPTY;
    owners[i] = tags.length ? tags : (parent[i] >= 0 ? owners[parent[i]] : EMPTY);
    if (!set.has(n)) continue;
    const own = owners[i];
    const m = marginIn(n, set);
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
// first rank that reaches a node is its minimum.
export function effectiveStatus(roots) {
  const { nodes } = flatten(roots);
  const N = nodes.length;
  const byId = new Map();
  for (let i = 0; i < N; i++) {
    if (nodes[i].id != null && !byId.has(nodes[i].id)) byId.set(nodes[i].id, i);
  }
  const reverse = new Array(N);
  const rank = new Int8Array(N);
  const bucket = [[], [], [], [], [], []];
  for (let i = 0; i < N; i++) {
    rank[i] = progressRank(nodes[i]);
    bucket[rank[i]].push(i);
    for (const d of nodes[i].deps || EMPTY) {
      const t = byId.get(d);
      if (t === undefined) continue;
      (reverse[t] || (reverse[t] = [])).push(i);
    }
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
  for (let i = 0; i < N; i++) if (eff[i] < rank[i]) out.set(nodes[i], RANK_KEYS[eff[i]]);
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
  for (const m of n.marks || EMPTY) {
    if (m.startsWith('taiga.') && m.length > 'taiga.'.length) return m.slice('taiga.'.length);
  }
  return null;
}

export function taigaSlugs(roots) {
  const { nodes, parent } = flatten(roots);
  const slugs = new Array(nodes.length);
  const map = new Map();
  for (let i = 0; i < nodes.length; i++) {
    slugs[i] = ownSlug(nodes[i]) || (parent[i] >= 0 ? slugs[parent[i]] : null);
    if (slugs[i]) map.set(nodes[i], slugs[i]);
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
