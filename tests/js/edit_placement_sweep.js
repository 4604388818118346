// Test-only entry: random small plans with an indented or mixed top level, tabs,
// continued first lines, bare `"` nodes, label-less and comment lines; every
// node removed, given a child, moved under every node and to root level after
// every node, and a root added after every node. After each edit the re-parse
// must show every other node under its old parent, and the moved or added node
// under the parent asked for. Loaded by tests/core/test_edit_placement.py.
import { parse } from './parser.js';
import { addNodeLine, moveSubtree, removeSubtree } from './edit.js';
import { preorder } from './facade.js';

// A linear congruential generator: the same plans on every executor.
function random(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

function indentation(r, width) {
  return r() < 0.2 ? '\t'.repeat(width >> 1) + ' '.repeat(width & 1) : ' '.repeat(width);
}

function plan(r) {
  const lines = [];
  let width = Math.floor(r() * 3) * 2;
  const count = 3 + Math.floor(r() * 8);
  for (let i = 0; i < count; i++) {
    width = Math.max(0, width + (Math.floor(r() * 5) - 2) * (r() < 0.5 ? 1 : 2));
    const ind = indentation(r, width);
    const k = r();
    if (k < 0.08) lines.push(`${ind}"`);
    else if (k < 0.14) lines.push(`${ind}" about ${i}`);
    else if (k < 0.18) lines.push(`%% comment ${i}`);
    else if (k < 0.21) lines.push(`${ind}- `);
    else if (k < 0.24) lines.push('');
    else if (k < 0.28) lines.push(`${ind}\\`, `${' '.repeat(Math.floor(r() * 4))}- N${i} #n${i}`);
    else if (k < 0.32) lines.push(`${ind}- N${i} \\`, `${' '.repeat(Math.floor(r() * 6))}more #n${i}`);
    else lines.push(`${ind}${['- ', '| ', '+ ', ''][Math.floor(r() * 4)]}N${i} #n${i}`);
  }
  if (r() < 0.3) lines.push('---', '#n1', '  text', '%% keep', '', '#n2', '  more');
  return lines.join('\n') + (r() < 0.7 ? '\n' : '');
}

// id -> parent id (null: a root; undefined: a parent without an id, not compared).
function parentIds(text) {
  const out = new Map();
  const visit = (nodes, parent) => {
    for (const n of nodes) {
      if (n.id != null) out.set(n.id, parent ? (parent.id ?? undefined) : null);
    }
  };
  const { roots } = parse(text);
  visit(roots, null);
  for (const n of preorder(roots)) visit(n.children, n);
  return out;
}

function compare(before, after, changed, wanted, label, failures) {
  for (const [id, parent] of before) {
    if (!after.has(id)) {
      if (changed !== null) failures.push(`${label}: #${id} is gone`);
      continue;
    }
    const want = id === changed ? wanted : parent;
    if (want !== undefined && after.get(id) !== want) {
      failures.push(`${label}: #${id} under ${after.get(id)} instead of ${want}`);
    }
  }
  if (wanted !== undefined && changed !== null && after.get(changed) !== wanted) {
    failures.push(`${label}: #${changed} under ${after.get(changed)} instead of ${wanted}`);
  }
}

globalThis.werkbaum.editPlacementSweep = ({ seed, plans }) => {
  const r = random(seed);
  const failures = [];
  let edits = 0;
  const attempt = (label, text, run, changed, wanted) => {
    let out;
    try {
      out = run();
    } catch (err) {
      // Refusals of impossible targets are fine; a refusal by the safety net is a
      // legal edit the placement got wrong.
      if (/indentation does not allow/.test(String(err.message))) failures.push(`${label}: ${err.message}`);
      return;
    }
    edits++;
    compare(parentIds(text), parentIds(out), changed, wanted, `${label} on ${JSON.stringify(text)}`, failures);
  };
  for (let p = 0; p < plans && failures.length < 20; p++) {
    const text = plan(r);
    const ids = [...new Set(preorder(parse(text).roots).filter((n) => n.id != null).map((n) => n.id))];
    attempt('add a root', text, () => addNodeLine(text, null, '- New #zz', null), 'zz', null);
    for (const id of ids) {
      attempt(`remove #${id}`, text, () => removeSubtree(text, id), null, undefined);
      attempt(`add under #${id}`, text, () => addNodeLine(text, id, '- New #zz', null), 'zz', id);
      attempt(`add a root after #${id}`, text, () => addNodeLine(text, null, '- New #zz', id), 'zz', null);
      attempt(`move #${id} to root level`, text, () => moveSubtree(text, id, null, null), id, null);
      for (const other of ids) {
        attempt(`move #${id} under #${other}`, text, () => moveSubtree(text, id, other, null), id, other);
        attempt(`move #${id} after root #${other}`, text, () => moveSubtree(text, id, null, other), id, null);
      }
    }
  }
  return { edits, failures };
};
