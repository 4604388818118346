// conformance.js — test-side harness for notation-cases.json (notation.md
// §24). It is copied next to facade.js at test time and adds
// werkbaum.conformanceCheck(case) -> {ok, mismatches}. Every expect key is
// checked; an unknown key is a mismatch, never a silent pass.
import { runPipeline, preorder, stationsOf } from './facade.js';
import * as parser from './parser.js';
import * as model from './model.js';
import * as taiga from './taiga.js';

// ---------------------------------------------------------------- comparison

// JSON semantics: undefined-valued keys count as absent, key order is free.
function plain(x) {
  return x === undefined ? undefined : JSON.parse(JSON.stringify(x));
}

function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k) || !deepEqual(a[k], b[k])) return false;
  }
  return true;
}

function same(actual, expected) {
  return deepEqual(plain(actual), plain(expected));
}

// Loads may be fractions; allow float noise, nothing more.
function sameNumber(a, b) {
  return typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) < 1e-9;
}

// Every key of `part` equals the same key of `whole`.
function containsFields(whole, part) {
  if (!whole || typeof whole !== 'object') return false;
  return Object.keys(part).every((k) => same(whole[k], part[k]));
}

function show(x) {
  return x === undefined ? 'undefined' : JSON.stringify(x);
}

function sorted(list) {
  return list.slice().sort();
}

// ---------------------------------------------------------------- case context

function rawWarning(w) {
  const o = Object.assign({}, w);
  delete o.text;
  delete o.structural;
  delete o.siblingLine; // our addition to mixedGate; the cases keep upstream's shape
  return o;
}

function buildContext(kase) {
  const run = runPipeline(kase.text, true);
  const all = preorder(run.roots);
  const set = run.plan ? run.plan.set : new Set();
  const firstById = new Map();
  for (const n of all) if (n.id != null && !firstById.has(n.id)) firstById.set(n.id, n);
  const derived = kase.derived === true;
  // Derived cases name nodes by '#id' (or the label when there is none).
  const name = (n) => (derived && n.id != null ? '#' + n.id : n.label);
  const byLabel = (label) => all.find((n) => n.label === label);
  const resolve = (key) => {
    if (derived && key.startsWith('#') && firstById.has(key.slice(1))) return firstById.get(key.slice(1));
    const hit = byLabel(key);
    if (hit) return hit;
    if (key.startsWith('#')) return firstById.get(key.slice(1));
    return undefined;
  };
  let loadsCache = null;
  const loads = () => loadsCache || (loadsCache = model.assigneeLoads(run.visible, set));
  return { run, all, set, name, resolve, loads };
}

// Field of §4.3 as the cases spell it: status is the key, gate is the type.
function nodeField(n, field) {
  if (field === 'status') return n.status ? n.status.key : null;
  if (field === 'gate') return n.type;
  if (field === 'sizeConflict') return n.sizeConflict === true;
  return n[field];
}

// Checks a label -> value map, resolving each label to a node.
function checkPerNode(ctx, key, expected, valueOf, bad) {
  for (const label of Object.keys(expected)) {
    const n = ctx.resolve(label);
    if (!n) { bad(key + ': no node "' + label + '"'); continue; }
    const got = valueOf(n);
    if (!same(got, expected[label])) bad(key + '[' + label + ']: got ' + show(got) + ', expected ' + show(expected[label]));
  }
}

function checkMapExact(key, gotObj, expected, bad) {
  const gk = sorted(Object.keys(gotObj));
  const ek = sorted(Object.keys(expected));
  const equal = same(gk, ek) && ek.every((k) => same(gotObj[k], expected[k]));
  if (!equal) bad(key + ': got ' + show(gotObj) + ', expected ' + show(expected));
}

// A tag without an entry has received nothing (0).
function checkPerTag(key, map, expected, bad) {
  for (const tag of Object.keys(expected)) {
    const got = map.has(tag) ? map.get(tag) : 0;
    if (!sameNumber(got, expected[tag])) bad(key + '[' + tag + ']: got ' + show(got) + ', expected ' + show(expected[tag]));
  }
}

// ---------------------------------------------------------------- analyze checks

const ANALYZE_CHECKS = {
  roots(ctx, exp, bad) {
    const got = ctx.run.roots.map((r) => r.label);
    if (!same(got, exp)) bad('roots: got ' + show(got) + ', expected ' + show(exp));
  },
  children(ctx, exp, bad) {
    checkPerNode(ctx, 'children', exp, (n) => (n.children || []).map((k) => k.label), bad);
  },
  nodes(ctx, exp, bad) {
    for (const want of exp) {
      const n = ctx.all.find((x) => x.line === want.line);
      if (!n) { bad('nodes: no node on line ' + want.line); continue; }
      for (const field of Object.keys(want)) {
        const got = nodeField(n, field);
        if (!same(got, want[field])) {
          bad('nodes[line ' + want.line + '].' + field + ': got ' + show(got) + ', expected ' + show(want[field]));
        }
      }
    }
  },
  warnings(ctx, exp, bad) {
    const got = ctx.run.warnings.map(rawWarning);
    if (!same(got, exp)) bad('warnings: got ' + show(got) + ', expected ' + show(exp));
  },
  parseWarnings(ctx, exp, bad) {
    const got = ctx.run.parseWarnings.slice().sort((a, b) => (a.line || 0) - (b.line || 0));
    if (!same(got, exp)) bad('parseWarnings: got ' + show(got) + ', expected ' + show(exp));
  },
  warningsContain(ctx, exp, bad) {
    for (const want of exp) {
      if (!ctx.run.warnings.some((w) => containsFields(w, want))) bad('warningsContain: missing ' + show(want));
    }
  },
  needed(ctx, exp, bad) {
    const got = sorted(ctx.all.filter((n) => ctx.set.has(n)).map(ctx.name));
    if (!same(got, sorted(exp))) bad('needed: got ' + show(got) + ', expected ' + show(exp));
  },
  neededContains(ctx, exp, bad) {
    const names = new Set(ctx.all.filter((n) => ctx.set.has(n)).map(ctx.name));
    for (const x of exp) if (!names.has(x)) bad('neededContains: "' + x + '" is not needed');
  },
  neededExcludes(ctx, exp, bad) {
    const names = new Set(ctx.all.filter((n) => ctx.set.has(n)).map(ctx.name));
    for (const x of exp) if (names.has(x)) bad('neededExcludes: "' + x + '" is needed');
  },
  exact(ctx, exp, bad) {
    const got = ctx.run.plan ? ctx.run.plan.exact : true;
    if (got !== exp) bad('exact: got ' + show(got) + ', expected ' + show(exp));
  },
  stations(ctx, exp, bad) {
    const got = stationsOf(ctx.run.visible, ctx.set).map(ctx.name);
    if (!same(got, exp)) bad('stations: got ' + show(got) + ', expected ' + show(exp));
  },
  assumedSize(ctx, exp, bad) {
    checkPerNode(ctx, 'assumedSize', exp, (n) => model.assumedSize(n), bad);
  },
  ownCost(ctx, exp, bad) {
    checkPerNode(ctx, 'ownCost', exp, (n) => model.ownCost(n), bad);
  },
  // Every visible node without a size that is neither done nor discarded.
  assumedSizeOfUnsized(ctx, exp, bad) {
    const got = {};
    const stack = ctx.run.visible.slice().reverse();
    while (stack.length) {
      const n = stack.pop();
      if (!n.size && !model.isDone(n)) got[ctx.name(n)] = model.assumedSize(n);
      const kids = model.visibleChildren(n, false);
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
    }
    checkMapExact('assumedSizeOfUnsized', got, exp, bad);
  },
  // loads and stationsPerTag are checked per listed tag (the upstream tests
  // ask for single tags: overload-stations lists only one of two tags).
  loads(ctx, exp, bad) {
    checkPerTag('loads', ctx.loads().loads, exp, bad);
  },
  total(ctx, exp, bad) {
    const got = ctx.loads().total;
    if (!sameNumber(got, exp)) bad('total: got ' + show(got) + ', expected ' + show(exp));
  },
  stationsPerTag(ctx, exp, bad) {
    checkPerTag('stationsPerTag', ctx.loads().stations, exp, bad);
  },
  totalStations(ctx, exp, bad) {
    const got = ctx.loads().totalStations;
    if (got !== exp) bad('totalStations: got ' + show(got) + ', expected ' + show(exp));
  },
  overloaded(ctx, exp, bad) {
    const got = ctx.run.plan ? model.overloadedAssignee(ctx.run.visible, ctx.set) : null;
    if (exp === null) {
      if (got !== null) bad('overloaded: got ' + show(got) + ', expected null');
    } else if (!got || !containsFields(got, exp)) {
      bad('overloaded: got ' + show(got) + ', expected at least ' + show(exp));
    }
  },
  effective(ctx, exp, bad) {
    const got = {};
    for (const [n, key] of model.effectiveStatus(ctx.run.visible)) got[ctx.name(n)] = key;
    checkMapExact('effective', got, exp, bad);
  },
  initialCollapsed(ctx, exp, bad) {
    const got = sorted(Array.from(model.initialCollapsed(ctx.run.visible, true)).map(ctx.name));
    if (!same(got, sorted(exp))) bad('initialCollapsed: got ' + show(got) + ', expected ' + show(exp));
  },
  taigaSlug(ctx, exp, bad) {
    const slugs = model.taigaSlugs(ctx.run.roots);
    checkPerNode(ctx, 'taigaSlug', exp, (n) => (slugs.has(n) ? slugs.get(n) : null), bad);
  },
  ticketRef(ctx, exp, bad) {
    checkPerNode(ctx, 'ticketRef', exp, (n) => taiga.ticketRefOf(n), bad);
  },
  nodeCount(ctx, exp, bad) {
    if (ctx.all.length !== exp) bad('nodeCount: got ' + ctx.all.length + ', expected ' + exp);
  },
  // Nodes that carry an id (duplicates included).
  idCount(ctx, exp, bad) {
    const got = ctx.all.filter((n) => n.id != null).length;
    if (got !== exp) bad('idCount: got ' + got + ', expected ' + exp);
  },
  rootCount(ctx, exp, bad) {
    if (ctx.run.roots.length !== exp) bad('rootCount: got ' + ctx.run.roots.length + ', expected ' + exp);
  },
};

function checkAnalyze(kase, bad) {
  if (typeof kase.text !== 'string') { bad('analyze case without text'); return; }
  const ctx = buildContext(kase);
  for (const key of Object.keys(kase.expect)) {
    const check = ANALYZE_CHECKS[key];
    if (!check) { bad('unchecked key ' + key); continue; }
    check(ctx, kase.expect[key], bad);
  }
}

// ---------------------------------------------------------------- transform checks

const TRANSFORM_MODULES = { parser, taiga };

function findFunction(kase) {
  if (kase.module) {
    const mod = TRANSFORM_MODULES[kase.module];
    return mod ? mod[kase.fn] : undefined;
  }
  for (const mod of [parser, taiga]) if (typeof mod[kase.fn] === 'function') return mod[kase.fn];
  return undefined;
}

function checkTransform(kase, bad) {
  const f = findFunction(kase);
  if (typeof f !== 'function') { bad('unknown function ' + kase.fn); return; }
  for (const key of Object.keys(kase.expect)) if (key !== 'result') bad('unchecked key ' + key);
  if (!Object.prototype.hasOwnProperty.call(kase.expect, 'result')) { bad('transform case without expect.result'); return; }
  const got = f(...(kase.args || []));
  if (!same(got, kase.expect.result)) bad('result: got ' + show(got) + ', expected ' + show(kase.expect.result));
}

// ---------------------------------------------------------------- entry

function conformanceCheck(kase) {
  const mismatches = [];
  const bad = (msg) => mismatches.push(msg);
  try {
    if (!kase || typeof kase.expect !== 'object' || kase.expect === null) bad('case without expect');
    else if (kase.kind === 'analyze') checkAnalyze(kase, bad);
    else if (kase.kind === 'transform') checkTransform(kase, bad);
    else bad('unknown kind ' + show(kase.kind));
  } catch (e) {
    bad('exception: ' + (e && e.stack ? e.stack : String(e)));
  }
  return { ok: mismatches.length === 0, mismatches };
}

globalThis.werkbaum = Object.assign(globalThis.werkbaum || {}, { conformanceCheck });
