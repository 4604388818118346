// Test-only entry: every node of a plan moved under every legal new parent and
// back, in one engine call (thousands of moves would take minutes as separate
// calls). Loaded next to the modules by tests/core/test_edit_sweep.py.
import { parse } from './parser.js';
import { moveSubtree } from './edit.js';
import { preorder } from './facade.js';

function index(text) {
  const { roots } = parse(text);
  const nodes = preorder(roots);
  const parentOf = new Map();
  for (const n of nodes) for (const k of n.children) parentOf.set(k, n);
  for (const r of roots) parentOf.set(r, null);
  const first = new Map();
  for (const n of nodes) if (n.id != null && !first.has(n.id)) first.set(n.id, n);
  const unique = nodes.filter((n) => n.id != null && first.get(n.id) === n);
  return { roots, nodes, parentOf, first, unique };
}

function subtreeIds(node) {
  const ids = new Set();
  const stack = [node];
  while (stack.length) {
    const n = stack.pop();
    if (n.id != null) ids.add(n.id);
    stack.push(...n.children);
  }
  return ids;
}

function contentLines(text) {
  return text.split('\n').filter((l) => l.trim() !== '' && !/^[ \t]*%%/.test(l)).join('\n');
}

function siblingsOf(ix, parent) {
  return parent ? parent.children : ix.roots;
}

// Every k-th target when there are more than `limit` (deterministic, rotated per node).
function spreadTargets(targets, limit, offset) {
  if (!limit || targets.length <= limit) return targets;
  const out = [];
  for (let k = 0; k < limit; k++) out.push(targets[(offset + Math.floor((k * targets.length) / limit)) % targets.length]);
  return out;
}

globalThis.werkbaum.editSweep = ({ text, maxParents }) => {
  const ix = index(text);
  const failures = [];
  let moves = 0;
  const count = new Map();
  for (const n of ix.nodes) if (n.id != null) count.set(n.id, (count.get(n.id) || 0) + 1);
  for (const node of ix.unique) {
    // A duplicated id names whichever copy comes first: a move can change which.
    if (count.get(node.id) > 1) continue;
    const inside = subtreeIds(node);
    const oldParent = ix.parentOf.get(node);
    const sibs = siblingsOf(ix, oldParent);
    const at = sibs.indexOf(node);
    const before = at > 0 ? sibs[at - 1] : null;
    // The old position must be nameable by ids that resolve to the same nodes.
    const parentNamed = oldParent === null || (oldParent.id != null && ix.first.get(oldParent.id) === oldParent);
    const beforeNamed = before === null ? at === sibs.length - 1 : before.id != null && ix.first.get(before.id) === before;
    const restorable = parentNamed && beforeNamed;
    const legal = ix.unique.filter((p) => !inside.has(p.id));
    const targets = [null, ...spreadTargets(legal, maxParents, moves)];
    for (const target of targets) {
      const label = `#${node.id} -> ${target ? '#' + target.id : 'root'}`;
      let moved;
      try {
        moved = moveSubtree(text, node.id, target ? target.id : null, null);
      } catch (err) {
        failures.push(`${label}: ${err.message}`);
        continue;
      }
      moves++;
      if (moved.split('\n').length !== text.split('\n').length) failures.push(`${label}: line count changed`);
      const after = index(moved);
      const now = after.first.get(node.id);
      const parentNow = now ? after.parentOf.get(now) : undefined;
      if (!now || (parentNow ? parentNow.id : null) !== (target ? target.id : null)) {
        failures.push(`${label}: not under the new parent after re-parsing`);
        continue;
      }
      if (restorable) {
        // Blank and comment-only lines between blocks stay where they are (RFC 003),
        // so the way back restores every other line, in order, byte for byte.
        const back = moveSubtree(moved, node.id, oldParent ? oldParent.id : null, before ? before.id : null);
        if (contentLines(back) !== contentLines(text)) failures.push(`${label}: moving back does not restore the text`);
      }
      if (failures.length > 20) return { moves, failures };
    }
  }
  return { moves, failures };
};
