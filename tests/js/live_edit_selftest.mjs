// Self-test for live.js and edit.js on node (fast iteration and the mutation
// check). Usage: node tests/js/live_edit_selftest.mjs [module-dir]
// The module dir defaults to src/werkbaum_core/js; point it at a copy with a
// deliberately broken edit.js to see the checks fail. Exit code 1 on failure.
//
// The checks compute expected results independently of edit.js: block ranges
// from the parse tree (node lines, descendants, continuation and `"` lines),
// indentation from the siblings or the document's step.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = path.resolve(process.argv[2] || path.join(here, '../../src/werkbaum_core/js'));
const load = (name) => import(pathToFileURL(path.join(dir, name)).href);
const live = await load('live.js');
const edit = await load('edit.js');
const { parse, logicalLines } = await load('parser.js');
const PLANS = path.join(here, '../data/plans');

let failures = 0;
let checks = 0;
function check(cond, msg) {
  checks++;
  if (!cond) {
    failures++;
    if (failures <= 25) console.log('FAIL', msg);
  }
}
const eq = (a, b) => JSON.stringify(a) === JSON.stringify(b);
// A check group that throws counts as one failure, so a broken module still gets a count.
function guard(label, fn) {
  try {
    return fn();
  } catch (err) {
    check(false, `${label}: threw ${err.message}`);
    return 0;
  }
}

// Deterministic PRNG (mulberry32).
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------------------
// live.js

function liveTests() {
  const b = ['a', 'b', 'c', 'd'];
  check(eq(live.computeOps(b, ['a', 'B', 'c', 'd']), [{ op: 'replace', index: 1, count: 1, lines: ['B'] }]), 'replace');
  check(eq(live.computeOps(b, ['a', 'b', 'neu', 'c', 'd']), [{ op: 'insert', index: 2, lines: ['neu'] }]), 'insert');
  check(eq(live.computeOps(b, ['a', 'c', 'd']), [{ op: 'delete', index: 1, count: 1 }]), 'delete');
  check(eq(live.computeOps(b, [...b, 'e']), [{ op: 'insert', index: 4, lines: ['e'] }]), 'append');
  check(
    eq(live.computeOps(['a', 'b', 'c', 'd', 'e', 'f'], ['a', 'B', 'c', 'd', 'neu', 'e', 'f']), [
      { op: 'replace', index: 1, count: 1, lines: ['B'] },
      { op: 'insert', index: 4, lines: ['neu'] },
    ]),
    'two hunks',
  );
  const r = rng(7);
  let n = 0;
  for (let k = 0; k < 3000; k++) {
    const alpha = 'abcde'.slice(0, 1 + Math.floor(r() * 5));
    const mk = () => Array.from({ length: Math.floor(r() * 12) }, () => alpha[Math.floor(r() * alpha.length)]);
    const a = mk();
    const c = mk();
    const ops = live.computeOps(a, c);
    if (!eq(live.applyOps(a, ops), c)) n++;
  }
  check(n === 0, `applyOps(a, computeOps(a,b)) == b failed ${n} times`);
  const big = Array.from({ length: 1001 }, (_, i) => `x${i}`);
  const big2 = Array.from({ length: 1000 }, (_, i) => `y${i}`);
  check(eq(live.computeOps(big, big2), [{ op: 'replace', index: 0, count: 1001, lines: big2 }]), 'cap');
  const at = Array.from({ length: 1000 }, (_, i) => `x${i}`);
  check(live.computeOps(at, big2).length === 1, '1e6 cells still diffed');
  check(eq(live.rebaseOps([{ op: 'insert', index: 3, lines: ['m'] }], [{ op: 'insert', index: 3, lines: ['f'] }]), [{ op: 'insert', index: 4, lines: ['m'] }]), 'rebase same index');
  check(live.rebaseOps([{ op: 'replace', index: 2, count: 2, lines: [] }], [{ op: 'insert', index: 3, lines: ['f'] }]) === null, 'rebase conflict');
  check(live.mapLine(5, [{ op: 'insert', index: 2, lines: ['a', 'b'] }]) === 7, 'mapLine shift');
  check(live.mapLine(5, [{ op: 'delete', index: 4, count: 3 }]) === 4, 'mapLine deleted');
}

// ---------------------------------------------------------------------------
// Fixture variants: ids, continuation lines, `"` lines, comments, tabs, wide

function preOrder(roots) {
  const out = [];
  const stack = [...roots].reverse().map((n) => [n, null]);
  while (stack.length) {
    const [n, p] = stack.pop();
    n._parent = p;
    out.push(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push([n.children[i], n]);
  }
  return out;
}

function sepIndex(L) {
  const cont = new Set(logicalLines(L.join('\n')).flatMap((r) => r.cont.map((c) => c - 1)));
  for (let i = 0; i < L.length; i++) if (!cont.has(i) && /^[ \t]*-{3,}[ \t]*$/.test(L[i].replace(/%%.*$/, ''))) return i;
  return L.length;
}

function visibleEndInsert(line, token) {
  const ci = line.indexOf('%%');
  const body = ci < 0 ? line : line.slice(0, ci);
  const core = body.replace(/[ \t]+$/, '');
  return core + ' ' + token + line.slice(core.length);
}

function withIds(text) {
  const L = text.split('\n');
  for (const n of preOrder(parse(text).roots)) if (n.id === null) L[n.line - 1] = visibleEndInsert(L[n.line - 1], `#t${n.line}`);
  return L.join('\n');
}

// Splits some node lines into continuation lines, adds `"` lines and comment lines.
function rich(text) {
  const L = text.split('\n');
  const nodes = preOrder(parse(text).roots);
  const byLine = new Map(nodes.map((n, k) => [n.line - 1, k]));
  const out = [];
  L.forEach((line, i) => {
    const k = byLine.get(i);
    if (k === undefined) return out.push(line);
    const ind = /^[ \t]*/.exec(line)[0];
    const ci = line.indexOf('%%');
    const body = ci < 0 ? line : line.slice(0, ci);
    const sp = body.lastIndexOf(' ', body.replace(/[ \t]+$/, '').length - 1);
    if (k % 3 === 0 && sp > ind.length + 1) {
      const contInd = ['', ind, ind + '    '][k % 9 / 3];
      out.push(line.slice(0, sp + 1) + '\\');
      out.push(contInd + line.slice(sp + 1));
    } else out.push(line);
    if (k % 4 === 1) out.push((k % 8 < 4 ? ind + '  ' : '') + `" note ${k}`);
    if (k % 5 === 2) out.push(`%% comment ${k}`);
  });
  return out.join('\n');
}

function retab(text) {
  const L = text.split('\n');
  const sep = sepIndex(L);
  for (let i = 0; i < sep; i++) L[i] = L[i].replace(/^((?: {2})+)/, (m) => '\t'.repeat(m.length / 2));
  return L.join('\n');
}

function widen(text) {
  const L = text.split('\n');
  const sep = sepIndex(L);
  for (let i = 0; i < sep; i++) L[i] = L[i].replace(/^ +/, (m) => m + m);
  return L.join('\n');
}

// ---------------------------------------------------------------------------
// Independent expectations

const widthOf = (s) => [...s].reduce((w, c) => w + (c === '\t' ? 2 : 1), 0);
const indentOf = (s) => /^[ \t]*/.exec(s)[0];

// Block = node line .. last line of the node, its descendants, their
// continuation lines and `"` lines (the tree part only).
function blockRange(text, node) {
  const L = text.split('\n');
  const sep = sepIndex(L);
  const recs = new Map(logicalLines(text).map((r) => [r.line, r.cont]));
  let end = node.line;
  for (const n of preOrder([node])) {
    end = Math.max(end, n.line, ...(recs.get(n.line) || []));
    for (const d of n.descLines || []) if (d - 1 < sep) end = Math.max(end, d);
  }
  return [node.line - 1, end - 1];
}

function docStep(nodes, L) {
  const counts = new Map();
  for (const n of nodes) {
    if (!n._parent) continue;
    const d = widthOf(indentOf(L[n.line - 1])) - widthOf(indentOf(L[n._parent.line - 1]));
    counts.set(d, (counts.get(d) || 0) + 1);
  }
  let best = 2;
  let c = 0;
  for (const [d, k] of counts) if (k > c || (k === c && d < best)) [best, c] = [d, k];
  return best;
}

function firstById(nodes, id) {
  return nodes.find((n) => n.id === id);
}

// Node identity across texts: label and id (ids may be duplicated in fixtures).
const nkey = (n) => (n ? `${n.label}\u0000${n.id}` : null);

function parentPairs(nodes, moved, newParent) {
  return nodes.map((n) => [nkey(n), n === moved ? nkey(newParent) : nkey(n._parent)]).map((p) => p.join('|')).sort();
}

function checkMove(text, id, parentId, afterId, label) {
  const L = text.split('\n');
  const nodes = preOrder(parse(text).roots);
  const node = firstById(nodes, id);
  const parent = parentId === null ? null : firstById(nodes, parentId);
  const [s, e] = blockRange(text, node);
  const block = L.slice(s, e + 1);
  let out;
  try {
    out = edit.moveSubtree(text, id, parentId, afterId);
  } catch (err) {
    return check(false, `${label}: threw ${err.message}`);
  }
  const M = out.split('\n');
  const nodes2 = preOrder(parse(out).roots);
  const node2 = firstById(nodes2, id);
  if (!node2) return check(false, `${label}: node lost`);
  const k = node2.line - 1;
  const movedBack = M.slice(k, k + block.length);
  const others = M.slice(0, k).concat(M.slice(k + block.length));
  check(eq(others, L.slice(0, s).concat(L.slice(e + 1))), `${label}: lines outside the block changed`);
  // Expected indentation: the sibling before the new place, else parent + step.
  const siblings = (parent ? parent.children : nodes.filter((n) => !n._parent)).filter((n) => n !== node);
  const prev = afterId !== null ? firstById(nodes, afterId) : siblings[siblings.length - 1];
  let want;
  if (!parent) want = 0;
  else if (prev) want = widthOf(indentOf(L[prev.line - 1]));
  else want = widthOf(indentOf(L[parent.line - 1])) + docStep(nodes, L);
  const delta = want - widthOf(indentOf(block[0]));
  check(widthOf(indentOf(movedBack[0])) === want, `${label}: node indentation ${widthOf(indentOf(movedBack[0]))} != ${want}`);
  block.forEach((line, j) => {
    const got = movedBack[j];
    if (got === undefined) return check(false, `${label}: block line ${j} missing`);
    if (/^[ \t]*$/.test(line)) return check(got === line, `${label}: blank line ${j} changed`);
    check(got.slice(indentOf(got).length) === line.slice(indentOf(line).length), `${label}: block line ${j} content changed`);
    const w = Math.max(0, widthOf(indentOf(line)) + delta);
    check(widthOf(indentOf(got)) === w, `${label}: block line ${j} width ${widthOf(indentOf(got))} != ${w}`);
  });
  // Structure: the node under its new parent, right after `prev`; everything else unchanged.
  check(eq(parentPairs(nodes2, null, null), parentPairs(nodes, node, parent)), `${label}: parents differ`);
  const descs = (ns) => ns.map((n) => `${nkey(n)}=${n.desc}`).sort();
  check(eq(descs(nodes2), descs(nodes)), `${label}: a description changed`);
  const sibs2 = node2._parent ? node2._parent.children : nodes2.filter((n) => !n._parent);
  const i2 = sibs2.indexOf(node2);
  check(prev ? sibs2[i2 - 1] && sibs2[i2 - 1].id === prev.id : i2 === 0, `${label}: wrong position among siblings`);
  const structural = (src) => parse(src).warnings.filter((w) => ['descStray', 'duplicateId', 'unknownStatus', 'unknownDesc'].includes(w.type)).length;
  check(structural(out) === structural(text), `${label}: structural warning count changed`);
}

function sample(list, max) {
  if (list.length <= max) return list;
  const out = [];
  for (let k = 0; k < max; k++) out.push(list[Math.floor((k * list.length) / max)]);
  return out;
}

function editSweep(name, text, maxNodes, maxTargets) {
  const nodes = preOrder(parse(text).roots).filter((n) => n.id !== null);
  const seen = new Set();
  const unique = nodes.filter((n) => !seen.has(n.id) && seen.add(n.id));
  let moves = 0;
  for (const node of sample(unique, maxNodes)) {
    const inside = new Set(preOrder([node]));
    const targets = [null, ...sample(unique.filter((n) => !inside.has(n)), maxTargets)];
    for (const p of targets) {
      const pid = p ? p.id : null;
      const cur = node._parent ? node._parent.id : null;
      const siblings = p ? p.children : unique.filter((n) => !n._parent);
      checkMove(text, node.id, pid, null, `${name}: move #${node.id} -> ${pid}`);
      const first = siblings.find((c) => c !== node && unique.includes(c));
      if (first && pid !== cur) checkMove(text, node.id, pid, first.id, `${name}: move #${node.id} -> ${pid} after #${first.id}`);
      moves++;
    }
    guard(`${name}: add #${node.id}`, () => checkAdd(name, text, node));
    guard(`${name}: remove #${node.id}`, () => checkRemove(name, text, node));
    guard(`${name}: size #${node.id}`, () => checkSizes(name, text, node));
    // Into its own subtree: an error.
    const child = preOrder([node]).find((n) => n !== node && unique.includes(n));
    if (child) {
      let msg = '';
      try {
        edit.moveSubtree(text, node.id, child.id);
      } catch (err) {
        msg = err.message;
      }
      check(msg.startsWith('invalid_argument:'), `${name}: move #${node.id} into own subtree not refused`);
    }
  }
  guard(`${name}: add root`, () => checkAdd(name, text, null));
  return moves;
}

function checkAdd(name, text, parent) {
  const L = text.split('\n');
  const nodes = preOrder(parse(text).roots);
  const line = '- [ ] #zz.new: Brand new (S)';
  const out = edit.addNodeLine(text, parent ? parent.id : null, line, null);
  const M = out.split('\n');
  const nodes2 = preOrder(parse(out).roots);
  const node2 = firstById(nodes2, 'zz.new');
  const label = `${name}: add under ${parent ? parent.id : 'root'}`;
  if (!node2) return check(false, `${label}: not found`);
  const k = node2.line - 1;
  check(eq(M.slice(0, k).concat(M.slice(k + 1)), L), `${label}: other lines changed`);
  check(M[k].trimStart() === line, `${label}: line text`);
  check((node2._parent ? node2._parent.id : null) === (parent ? parent.id : null), `${label}: wrong parent`);
  const sibs = parent ? parent.children : nodes.filter((n) => !n._parent);
  const want = !parent ? 0 : sibs.length ? widthOf(indentOf(L[sibs[sibs.length - 1].line - 1])) : widthOf(indentOf(L[parent.line - 1])) + docStep(nodes, L);
  check(widthOf(indentOf(M[k])) === want, `${label}: indentation ${widthOf(indentOf(M[k]))} != ${want}`);
  const sibs2 = node2._parent ? node2._parent.children : nodes2.filter((n) => !n._parent);
  check(sibs2[sibs2.length - 1] === node2, `${label}: not the last child`);
}

function checkRemove(name, text, node) {
  const L = text.split('\n');
  const [s, e] = blockRange(text, node);
  const out = edit.removeSubtree(text, node.id);
  const M = out.split('\n');
  const sep = sepIndex(L);
  const label = `${name}: remove #${node.id}`;
  const tree = L.slice(0, s).concat(L.slice(e + 1, sep));
  check(eq(M.slice(0, tree.length), tree), `${label}: tree part lines changed`);
  const all0 = preOrder(parse(text).roots);
  const nodeAgain = all0.find((n) => n.line === node.line);
  const inside = new Set(preOrder([nodeAgain]));
  const kept = all0.filter((n) => !inside.has(n));
  const parsed = parse(out);
  const after = preOrder(parsed.roots);
  check(eq(after.map(nkey), kept.map(nkey)), `${label}: other nodes changed`);
  // Descriptions stay with the nodes that keep their id's first assignment.
  const firstOf = new Set(kept.filter((n) => n === firstById(all0, n.id)).map(nkey));
  after.forEach((n, k) => {
    if (firstOf.has(nkey(n))) check(n.desc === kept[k].desc, `${label}: desc of #${n.id} changed`);
  });
  const gone = new Set([...inside].map((n) => n.id).filter((id) => !kept.some((n) => n.id === id)));
  check(!parsed.warnings.some((w) => w.type === 'unknownDesc' && gone.has(w.id)), `${label}: orphan description left`);
  // Description part: only whole lines dropped, the rest in order.
  let j = tree.length;
  for (let i = sep; i < L.length && j < M.length; i++) if (L[i] === M[j]) j++;
  check(j === M.length, `${label}: description part not a subsequence`);
}

function checkSizes(name, text, node) {
  const L = text.split('\n');
  const label = `${name}: size #${node.id}`;
  for (const size of ['XS', 'XXL', null]) {
    const out = edit.setSizeToken(text, node.id, size);
    const M = out.split('\n');
    const n2 = firstById(preOrder(parse(out).roots), node.id);
    const changed = L.map((l, i) => (l === M[i] ? -1 : i)).filter((i) => i >= 0);
    check(M.length === L.length && changed.length <= 1, `${label} ${size}: more than one line changed`);
    if (size) check(n2.size === size, `${label} ${size}: size reads ${n2.size}`);
    check(n2.label === node.label && eq(n2.tags, node.tags) && eq(n2.deps, node.deps), `${label} ${size}: label or tokens changed`);
  }
}

// ---------------------------------------------------------------------------
// Focused examples

function focused() {
  const t = [
    '%% head',
    '- [ ] #a: A (M)',
    '  - [ ] #b: Bee \\',
    'continued (S)',
    '    " desc b',
    '    - [ ] #c: C',
    '%% inner comment',
    '      - [ ] #c2: C2',
    '',
    '  - [ ] #d: D  %% note',
    '',
    '---',
    '#b',
    '  Long b.',
    '',
    '#c',
    '  Long c.',
    '#d',
    '  Long d.',
    '',
  ].join('\n');
  check(
    edit.moveSubtree(t, 'b', 'd') ===
      t.replace('  - [ ] #b: Bee \\\ncontinued (S)\n    " desc b\n    - [ ] #c: C\n%% inner comment\n      - [ ] #c2: C2\n\n  - [ ] #d: D  %% note\n',
        '\n  - [ ] #d: D  %% note\n    - [ ] #b: Bee \\\n  continued (S)\n      " desc b\n      - [ ] #c: C\n  %% inner comment\n        - [ ] #c2: C2\n'),
    'move b under d (continuation, " line, inner comment travel)',
  );
  check(edit.setSizeToken(t, 'b', 'L').includes('continued (L)'), 'size on continuation line');
  check(edit.setSizeToken(t, 'b', null).includes('\ncontinued\n'), 'size removed on continuation line');
  check(edit.setSizeToken(t, 'd', 'XL').includes('#d: D (XL)  %% note'), 'size before comment');
  check(edit.setSizeToken('- #x: A \\\n  B', 'x', 'S') === '- #x: A \\\n  B (S)', 'size at end of continued node');
  check(edit.setSizeToken('- #x: A (M) \\\n  B', 'x', 'S') === '- #x: A (S) \\\n  B', 'size on first line of continued node');
  check(edit.setSizeToken('- #x: A \\', 'x', 'S') === '- #x: A (S) \\', 'size before trailing marker');
  check(edit.setSizeToken('- #x: Variante (L) bauen (M)', 'x', 'XS') === '- #x: Variante (L) bauen (XS)', 'last token');
  check(edit.setSizeToken('- #x: A https://e.org/(M) (S)', 'x', 'XL') === '- #x: A https://e.org/(M) (XL)', 'url');
  const r = edit.removeSubtree(t, 'b');
  check(r === t.replace('  - [ ] #b: Bee \\\ncontinued (S)\n    " desc b\n    - [ ] #c: C\n%% inner comment\n      - [ ] #c2: C2\n', '').replace('#b\n  Long b.\n\n#c\n  Long c.\n', ''), 'remove b with its blocks');
  check(edit.removeSubtree(t, 'd').endsWith('#c\n  Long c.\n'), 'remove last desc block keeps trailing newline');
  check(edit.addNodeLine(t, 'c2', '- [ ] #e: E').includes('      - [ ] #c2: C2\n        - [ ] #e: E\n'), 'add child to leaf');
  check(edit.addNodeLine('\tA #a\n\t\t- B #b\n', 'b', '- C') === '\tA #a\n\t\t- B #b\n\t\t\t- C\n', 'tabs');
  for (const [args, code] of [
    [['x', null], 'not_found'],
    [['a', 'zz'], 'not_found'],
    [['a', 'c'], 'invalid_argument'],
    [['b', 'a', 'c'], 'invalid_argument'],
  ]) {
    let msg = '';
    try {
      edit.moveSubtree(t, ...args);
    } catch (err) {
      msg = err.message;
    }
    check(msg.startsWith(code + ':'), `error ${code} for ${args}: ${msg}`);
  }
}

// ---------------------------------------------------------------------------

guard('live', liveTests);
guard('focused', focused);
let moves = 0;
for (const file of fs.readdirSync(PLANS).sort()) {
  const base = withIds(fs.readFileSync(path.join(PLANS, file), 'utf8'));
  const big = base.length > 20000;
  for (const [variant, text] of [['plain', base], ['rich', rich(base)], ['tabs', retab(rich(base))], ['wide', widen(base)]]) {
    moves += guard(`${file}/${variant}`, () => editSweep(`${file}/${variant}`, text, big ? 25 : 30, big ? 10 : 20));
  }
}
console.log(`${checks} checks, ${moves} moves, ${failures} failures`);
process.exit(failures ? 1 : 0);
