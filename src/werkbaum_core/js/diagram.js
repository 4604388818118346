// diagram.js — the plan as a picture: an inspect result ({tree, warnings,
// path}, the JSON the tools return) becomes one self-contained HTML page or
// SVG document (inline CSS and SVG, no external resources, no script).
//
// Pure and DOM-free, so that the same module draws in the engine (`werkbaum
// render`) and in a browser (the MCP App view): it reads only its arguments,
// imports only model.js (the fold rule, notation.md §16) and uses ES2022
// without Intl, timers or crypto. Every number it writes is an integer, so
// the output is byte-identical on QuickJS, V8 and any other engine. Plan text
// is untrusted: everything taken from the analysis goes through esc().
//
// Layout: one column per depth, a parent on the first row of its subtree and
// its children in the next column, joined by a bus that carries the group's
// gate. Linear in the number of nodes and iterative (plans nest deeply).
import { initialCollapsed } from './model.js';

// notation.md §7: box code -> upstream key (CSS class), English name, colours.
const STATUSES = [
  ['?', 'idee', 'idea', '#EBEDEF', '#A2ABB5'],
  [' ', 'geplant', 'planned', '#EBE4F6', '#A991D4'],
  ['!', 'highrisk', 'high risk (effort unclear)', '#FFE5CC', '#F97316'],
  ['~', 'arbeit', 'in progress', '#FADDE4', '#D897A8'],
  ['/', 'durchstich', 'walking skeleton / demo-able', '#FBF2CE', '#D9BE63'],
  ['x', 'fertig', 'done', '#DCF1DE', '#86C293'],
  ['^', 'prod', 'in production', '#DBEAF8', '#85ACD7'],
  ['-', 'verworfen', 'discarded', '#F1F2F4', '#B3BAC2'],
];
const NEUTRAL = { code: null, key: 'neutral', name: 'no status', fill: '#FFFFFF', stroke: '#AAB2BD' };
const STATUS_BY_CODE = new Map(
  STATUSES.map(([code, key, name, fill, stroke]) => [code, { code, key, name, fill, stroke }]),
);

const GATE_NAMES = { and: 'all of', or: 'any of', xor: 'exactly one' };

// Geometry (px). MID is the height of a box's first text row, where edges attach.
const BOX_W = 256;
const GAP_X = 92;
const COL = BOX_W + GAP_X;
const BUS = 18;
const GAP_Y = 14;
const PAD = 7;
const LINE = 15;
const META_LINE = 15;
const MID = 14;
const TEXT_X = 32;
const INNER = BOX_W - 16;
const MARGIN = 16;
const MIN_WIDTH = 960;
const LABEL_CHARS = 32; // notation.md §19: at most 32 characters per line
const LABEL_LINES = 4;
const META_CHAR = 6; // estimated advance of a 10px character
const LIST_LIMIT = 40; // warnings written out in the header; all stay at their nodes

const EMPTY = [];

// ---------------------------------------------------------------- text

// Characters XML 1.0 forbids (a standalone .svg with one of them does not
// parse) and lone surrogates become U+FFFD; surrogate pairs stay (matched
// whole, so no lookbehind is needed); markup characters become entities.
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF]|[\uD800-\uDFFF]/g;
const ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

const NEEDS_ESCAPE = /[&<>"'\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;

function esc(value) {
  const text = String(value);
  if (!NEEDS_ESCAPE.test(text)) return text; // most labels: no copy, no replace
  const xml = text.replace(NOT_XML, (m) => (m.length === 2 ? m : '\uFFFD'));
  return xml.replace(/[&<>"']/g, (ch) => ENTITIES[ch]);
}

// Characters as a reader counts them (code points, not UTF-16 units).
function charCount(text) {
  return /[\uD800-\uDFFF]/.test(text) ? Array.from(text).length : text.length;
}

function clip(text, max) {
  if (charCount(text) <= max) return text;
  return Array.from(text).slice(0, max - 1).join('') + '…';
}

function greedyLines(words, width) {
  const lines = [];
  let line = '';
  for (const word of words) {
    if (!line) line = word;
    else if (line.length + 1 + word.length <= width) line += ' ' + word;
    else {
      lines.push(line);
      line = word;
    }
  }
  lines.push(line);
  return lines;
}

// Balanced wrapping: the fewest lines of at most `max` characters, then the
// narrowest width that keeps that count, so the lines come out even.
function wrapLabel(label, max = LABEL_CHARS) {
  const text = String(label).replace(/\s+/g, ' ').trim();
  if (text.length <= max) return [text];
  const words = [];
  for (const word of text.split(' ')) {
    const chars = Array.from(word);
    for (let i = 0; i < chars.length; i += max) words.push(chars.slice(i, i + max).join(''));
  }
  const widest = greedyLines(words, max);
  if (widest.length === 1) return widest;
  let total = words.length - 1;
  for (const word of words) total += word.length;
  for (let width = Math.ceil(total / widest.length); width < max; width++) {
    const lines = greedyLines(words, width);
    if (lines.length === widest.length) return lines;
  }
  return widest;
}

function labelLines(label) {
  const lines = wrapLabel(label);
  if (lines.length <= LABEL_LINES) return lines;
  const kept = lines.slice(0, LABEL_LINES);
  kept[LABEL_LINES - 1] = clip(kept[LABEL_LINES - 1] + ' …', LABEL_CHARS);
  return kept;
}

function plural(count, word) {
  return count + ' ' + word + (count === 1 ? '' : 's');
}

// ---------------------------------------------------------------- the analysis

function childrenOf(n) {
  return Array.isArray(n.children) ? n.children : EMPTY;
}

function statusOf(n) {
  return (typeof n.status === 'string' && STATUS_BY_CODE.get(n.status)) || NEUTRAL;
}

// Pre-order over every node with parent index, depth and subtree end (the
// index after the node's last descendant), without recursion.
function flatten(tops) {
  const nodes = [];
  const parent = [];
  const depth = [];
  const stack = [];
  for (let i = tops.length - 1; i >= 0; i--) stack.push(tops[i], -1, 0);
  while (stack.length) {
    const d = stack.pop();
    const p = stack.pop();
    const n = stack.pop();
    if (!n || typeof n !== 'object') throw new TypeError('diagram: every tree node must be an object');
    nodes.push(n);
    parent.push(p);
    depth.push(d);
    const kids = childrenOf(n);
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i], nodes.length - 1, d + 1);
  }
  const end = new Array(nodes.length);
  for (let i = 0; i < nodes.length; i++) end[i] = i + 1;
  for (let i = nodes.length - 1; i > 0; i--) {
    if (parent[i] >= 0 && end[i] > end[parent[i]]) end[parent[i]] = end[i];
  }
  return { nodes, parent, depth, end };
}

// The path's refs (engine-contract.md): a node carries its own `ref` where it is
// not '#id' (an id an earlier node already carries); otherwise '#id', or 'L<line>'
// for a node without an id.
function refsOf(nodes) {
  return nodes.map((n) => (typeof n.ref === 'string' ? n.ref
    : typeof n.id === 'string' ? '#' + n.id : 'L' + n.line));
}

function refOfStation(s) {
  return typeof s === 'string' ? s : s && typeof s.ref === 'string' ? s.ref : '';
}

// What each drawn node stands for: itself, or (folded) its whole subtree.
function summarize(flat, analysis, expand) {
  const { nodes, end } = flat;
  const warnings = Array.isArray(analysis.warnings) ? analysis.warnings : EMPTY;
  const path = analysis.path && typeof analysis.path === 'object' ? analysis.path : null;
  const refs = refsOf(nodes);
  const needed = new Set(path && Array.isArray(path.needed) ? path.needed : EMPTY);
  const stationList = path && Array.isArray(path.stations) ? path.stations.map(refOfStation) : EMPTY;
  const stationNo = new Map();
  stationList.forEach((ref, i) => stationNo.set(ref, i + 1));

  let folded = new Set();
  if (!expand) {
    folded = initialCollapsed(analysis.tree);
    for (const top of analysis.tree) folded.delete(top); // the picture always opens its tops
  }
  const rep = new Array(nodes.length);
  const visible = [];
  const hidden = new Map();
  for (let i = 0; i < nodes.length; ) {
    rep[i] = i;
    visible.push(i);
    if (end[i] > i + 1 && folded.has(nodes[i])) {
      for (let j = i + 1; j < end[i]; j++) rep[j] = i;
      hidden.set(i, end[i] - i - 1);
      i = end[i];
    } else i++;
  }

  const info = new Array(nodes.length);
  for (const i of visible) info[i] = { needed: false, first: 0, last: 0, warnings: EMPTY };
  for (let i = 0; i < nodes.length; i++) {
    const box = info[rep[i]];
    if (needed.has(refs[i])) box.needed = true;
    const no = stationNo.get(refs[i]);
    if (no) {
      if (!box.first) box.first = no;
      box.last = no;
    }
  }
  const atLine = new Map();
  for (let i = 0; i < nodes.length; i++) if (!atLine.has(nodes[i].line)) atLine.set(nodes[i].line, i);
  for (const w of warnings) {
    const at = w && w.line != null ? atLine.get(w.line) : undefined;
    if (at === undefined) continue;
    const box = info[rep[at]];
    if (box.warnings === EMPTY) box.warnings = [];
    box.warnings.push(w);
  }
  // What an inspect view left out of the tree (depth, hideDone), for the header.
  const counted = (o, keys) => o && typeof o === 'object' && keys.every((k) => typeof o[k] === 'number');
  const view = {
    cut: counted(analysis.cut, ['depth', 'nodes']) ? analysis.cut : null,
    hidden: counted(analysis.hidden, ['subtrees', 'nodes']) ? analysis.hidden : null,
  };
  return {
    refs, visible, hidden, info, warnings, path, view, stationCount: stationList.length, neededCount: needed.size,
  };
}

// ---------------------------------------------------------------- one node box

// '3', or '3–5' for a folded box that stands for several stations (a subtree
// is contiguous in document order, and so are its stations).
function stationRange(box) {
  return box.last > box.first ? box.first + '–' + box.last : String(box.first);
}

// An inspect view cut at a depth keeps a node's count of descendants instead
// of its children (engine-contract.md, `depth`).
function cutBelow(n) {
  return typeof n.descendants === 'number' && n.descendants > 0 && !childrenOf(n).length ? n.descendants : 0;
}

function labelOf(n) {
  return n.label == null ? '' : String(n.label);
}

function metaItems(n, box, status, hiddenCount, stationCount) {
  const items = [];
  const add = (cls, text, title) => items.push({ cls, text, title: title || '' });
  if (box.first) {
    const range = stationRange(box);
    const what = hiddenCount ? 'folded subtree with station ' : 'station ';
    add('pill station', 'S' + range.replace('–', '–S'),
      what + range + ' of ' + stationCount + ': the open front of the cheapest path');
  }
  if (box.warnings.length) {
    const count = box.warnings.length;
    add('pill warn', count > 1 ? '⚠ ' + count : '⚠', box.warnings.map((w) => String(w.text)).join('\n'));
  }
  const eff = typeof n.effectiveStatus === 'string' ? STATUS_BY_CODE.get(n.effectiveStatus) : undefined;
  if (eff) {
    add('pill eff st-' + eff.key, '→[' + eff.code + ']',
      'effective status: ' + eff.name + ' (a dependency is less advanced than ' + status.name + ')');
  }
  if (typeof n.size === 'string') {
    if (n.sizeConflict) add('pill size conflict', n.size, 'size ' + n.size + ': its required parts need more');
    else add('pill size', n.size);
  } else if (typeof n.assumedSize === 'string') {
    add('pill size assumed', '~' + n.assumedSize,
      'assumed size ' + n.assumedSize + ': no size written, estimated from the children');
  }
  if (typeof n.id === 'string') add('id', clip('#' + n.id, 36));
  for (const tag of Array.isArray(n.tags) ? n.tags : EMPTY) add('pill person', clip('@' + tag, 24));
  if (n.optional) add('flag', 'optional');
  if (n.focus) add('flag', '!!!', 'focus');
  if (typeof n.url === 'string') add('flag', '↗', n.url);
  if (hiddenCount) {
    add('pill folded', '▸ ' + hiddenCount + ' hidden',
      'folded in the text: ' + plural(hiddenCount, 'node') + ' below (expand to show them)');
  }
  const cut = cutBelow(n);
  if (cut) add('pill folded', '▸ ' + cut + ' below', plural(cut, 'node') + ' below, not in this view (depth)');
  return items;
}

// Places the meta items in rows of INNER px; returns the rows used.
function placeMeta(items) {
  let x = 0;
  let row = 0;
  for (const item of items) {
    item.w = charCount(item.text) * META_CHAR + (item.cls.startsWith('pill') ? 10 : 0);
    if (x > 0 && x + item.w > INNER) {
      row++;
      x = 0;
    }
    item.x = x;
    item.row = row;
    x += item.w + 5;
  }
  return items.length ? row + 1 : 0;
}

function pillSvg(cls, x, y, w, text, title) {
  return ['<g class="', cls, '">', title ? '<title>' + esc(title) + '</title>' : '',
    '<rect x="', x, '" y="', y, '" width="', w, '" height="13" rx="6"/><text x="', x + 5, '" y="', y + 10, '">',
    esc(text), '</text></g>'].join('');
}

function metaSvg(item, top) {
  const x = 8 + item.x;
  const y = top + item.row * META_LINE;
  if (item.cls.startsWith('pill')) return pillSvg(item.cls, x, y, item.w, item.text, item.title);
  const title = item.title ? '<title>' + esc(item.title) + '</title>' : '';
  return ['<text class="', item.cls, '" x="', x, '" y="', y + 10, '">', title, esc(item.text), '</text>'].join('');
}

function tooltip(n, status, box, summary, hiddenCount) {
  const facts = [status.code === null ? 'no status' : '[' + status.code + '] ' + status.name];
  if (typeof n.size === 'string') facts.push('size ' + n.size);
  else if (typeof n.assumedSize === 'string') facts.push('size ' + n.assumedSize + ' (assumed)');
  const tags = Array.isArray(n.tags) ? n.tags : EMPTY;
  if (tags.length) facts.push(tags.map((t) => '@' + t).join(' '));
  if (n.optional) facts.push('optional');
  const lines = [labelOf(n), facts.join(' · ')];
  const deps = Array.isArray(n.deps) ? n.deps : EMPTY;
  if (deps.length) lines.push('needs ' + deps.map((d) => '#' + d).join(', '));
  if (box.first) lines.push('station ' + stationRange(box) + ' of ' + summary.stationCount);
  else if (box.needed) lines.push('on the cheapest path');
  if (hiddenCount) lines.push(plural(hiddenCount, 'node') + ' folded below');
  if (typeof n.desc === 'string' && n.desc) lines.push('', n.desc);
  return lines.join('\n');
}

function nodeBox(n, lines, rows) {
  return PAD + lines.length * LINE + (rows ? 3 + rows * META_LINE : 0) + PAD - 2;
}

// ---------------------------------------------------------------- header

function legendItems() {
  const items = [];
  const sample = (w, text, draw) => items.push({
    w: w + 5 + Math.ceil((text.length * 11) / 2), // 11px text: about 5.5px a character
    svg: (x, y) => draw(x, y) + '<text x="' + (x + w + 5) + '" y="' + y + '">' + esc(text) + '</text>',
  });
  for (const s of STATUSES.map(([code]) => STATUS_BY_CODE.get(code)).concat([NEUTRAL])) {
    const glyph = s.code === null ? '' : '[' + s.code + ']';
    sample(24, s.name, (x, y) => '<g class="st-' + s.key + '"><rect class="box" x="' + x + '" y="' + (y - 11) +
      '" width="24" height="15" rx="3"/><text class="glyph" x="' + (x + 2) + '" y="' + y + '">' + esc(glyph) +
      '</text></g>');
  }
  const pill = (cls, label, text) => {
    const w = charCount(label) * META_CHAR + 10;
    sample(w, text, (x, y) => pillSvg('pill ' + cls, x, y - 10, w, label, ''));
  };
  sample(24, 'on the cheapest path', (x, y) => '<rect class="halo" x="' + (x + 2) + '" y="' + (y - 10) +
    '" width="20" height="13" rx="3"/>');
  pill('station', 'S1', 'station (open front, in order)');
  pill('eff st-durchstich', '→[/]', 'effective status (a dependency is behind)');
  pill('size assumed', '~M', 'assumed size');
  pill('warn', '⚠', 'warning (hover for the text)');
  sample(24, 'optional', (x, y) => '<path class="edge optional" d="M' + x + ' ' + (y - 4) + 'H' + (x + 24) + '"/>');
  pill('folded', '▸ 3 hidden', 'folded subtree');
  sample(0, 'gates: all of · any of · exactly one', () => '');
  return items;
}

function loadLine(path) {
  const loads = path && path.assigneeLoads && typeof path.assigneeLoads === 'object' ? path.assigneeLoads : null;
  if (!loads || !loads.loads || typeof loads.total !== 'number' || loads.total <= 0) return '';
  const share = (load) => Math.round((load / loads.total) * 100);
  const entries = Object.keys(loads.loads).map((tag, order) => ({ tag, order, share: share(loads.loads[tag]) }));
  if (!entries.length) return '';
  entries.sort((a, b) => b.share - a.share || a.order - b.order);
  let assigned = 0;
  for (const tag of Object.keys(loads.loads)) assigned += loads.loads[tag];
  const parts = entries.map((e) => '@' + e.tag + ' ' + e.share + '%');
  const rest = Math.round(((loads.total - assigned) / loads.total) * 100);
  if (rest > 0) parts.push('unassigned ' + rest + '%');
  return 'Load on the path: ' + parts.join(', ');
}

function header(summary, nodeCount, hiddenTotal, title, width) {
  const out = [];
  let y = MARGIN + 14;
  out.push('<text class="title" x="' + MARGIN + '" y="' + y + '">' + esc(title) + '</text>');
  const facts = [plural(nodeCount, 'node')];
  if (summary.path) {
    facts.push(summary.neededCount + ' on the cheapest path' + (summary.path.exact === false ? ' (approximate)' : ''));
    facts.push(plural(summary.stationCount, 'station'));
  }
  facts.push(summary.warnings.length ? plural(summary.warnings.length, 'warning') : 'no warnings');
  if (hiddenTotal) facts.push(plural(hiddenTotal, 'node') + ' in folded subtrees');
  const { cut, hidden } = summary.view;
  if (cut) facts.push('cut at depth ' + cut.depth + ' (' + plural(cut.nodes, 'node') + ' with more below)');
  if (hidden) {
    const nodes = plural(hidden.nodes, 'node');
    facts.push(plural(hidden.subtrees, 'done or discarded subtree') + ' (' + nodes + ') left out');
  }
  y += 20;
  out.push('<text class="summary" x="' + MARGIN + '" y="' + y + '">' + esc(facts.join(' · ')) + '</text>');
  const load = loadLine(summary.path);
  if (load) {
    y += 17;
    out.push('<text class="summary" x="' + MARGIN + '" y="' + y + '">' + esc(load) + '</text>');
  }
  y += 24;
  let x = MARGIN;
  out.push('<g class="legend">');
  for (const item of legendItems()) {
    if (x > MARGIN && x + item.w > width - MARGIN) {
      x = MARGIN;
      y += 20;
    }
    out.push(item.svg(x, y));
    x += item.w + 18;
  }
  out.push('</g>');
  const shown = summary.warnings.slice(0, LIST_LIMIT);
  if (shown.length) {
    y += 8;
    out.push('<g class="warnings">');
    for (const w of shown) {
      y += 16;
      const text = w && w.text != null ? w.text : String(w && w.type);
      out.push('<text x="' + MARGIN + '" y="' + y + '">⚠ ' + esc(text) + '</text>');
    }
    if (summary.warnings.length > shown.length) {
      y += 16;
      const more = summary.warnings.length - shown.length;
      out.push('<text x="' + MARGIN + '" y="' + y + '">… and ' + more + ' more at their nodes</text>');
    }
    out.push('</g>');
  }
  return { svg: out.join(''), height: y + 22 };
}

// ---------------------------------------------------------------- style

function statusRules() {
  const rules = [];
  for (const s of STATUS_BY_CODE.values()) {
    const colours = '{fill:' + s.fill + ';stroke:' + s.stroke + '}';
    rules.push('.wb-diagram .st-' + s.key + ' .box,.wb-diagram .eff.st-' + s.key + ' rect' + colours);
  }
  rules.push('.wb-diagram .st-neutral .box{fill:' + NEUTRAL.fill + ';stroke:' + NEUTRAL.stroke + '}');
  return rules.join('');
}

const STYLE = [
  '.wb-diagram{font-family:"Segoe UI",Helvetica,Arial,"Liberation Sans",sans-serif;font-size:12px;fill:#1F2937}',
  '.wb-diagram .bg{fill:#FFFFFF}',
  '.wb-diagram .title{font-size:16px;font-weight:700}',
  '.wb-diagram .summary,.wb-diagram .legend,.wb-diagram .warnings{font-size:11px;fill:#374151}',
  '.wb-diagram .warnings{fill:#991B1B}',
  '.wb-diagram .box{stroke-width:1.5}',
  '.wb-diagram .st-verworfen .box{stroke-dasharray:4 3}',
  '.wb-diagram .st-verworfen .label{text-decoration:line-through}',
  '.wb-diagram .faded{opacity:.45}',
  '.wb-diagram .glyph,.wb-diagram .id{font-family:"Liberation Mono",Menlo,Consolas,"DejaVu Sans Mono",monospace}',
  '.wb-diagram .glyph{font-size:11px;font-weight:700}',
  '.wb-diagram .halo{fill:none;stroke:#1D4ED8;stroke-width:3}',
  '.wb-diagram .stack{fill:#FFFFFF;stroke:#6B7280;stroke-width:1}',
  '.wb-diagram .edge{fill:none;stroke:#9CA3AF;stroke-width:1.25}',
  '.wb-diagram .edge.needed{stroke:#1D4ED8;stroke-width:2.5}',
  '.wb-diagram .edge.optional{stroke-dasharray:5 4}',
  '.wb-diagram .gate{font-size:10px;font-style:italic;fill:#4B5563}',
  '.wb-diagram .meta,.wb-diagram .legend .pill{font-size:10px}',
  '.wb-diagram .id{fill:#4B5563}',
  '.wb-diagram .flag{fill:#4B5563;font-style:italic}',
  '.wb-diagram .pill rect{fill:#FFFFFF;stroke:#6B7280;stroke-width:1}',
  '.wb-diagram .pill.station rect{fill:#1D4ED8;stroke:#1D4ED8}',
  '.wb-diagram .pill.station text{fill:#FFFFFF;font-weight:700}',
  '.wb-diagram .pill.warn rect{fill:#FEE2E2;stroke:#DC2626}',
  '.wb-diagram .pill.warn text{fill:#991B1B;font-weight:700}',
  '.wb-diagram .pill.assumed rect{fill:#374151;stroke:#374151;stroke-dasharray:2 2}',
  '.wb-diagram .pill.assumed text{fill:#FFFFFF}',
  '.wb-diagram .pill.eff text{font-weight:700}',
  '.wb-diagram .pill.conflict rect{stroke:#DC2626}',
  '.wb-diagram .pill.person rect{fill:#F3F4F6;stroke:#D1D5DB}',
  '.wb-diagram .pill.folded rect{fill:#F9FAFB;stroke:#6B7280;stroke-dasharray:3 2}',
].join('');

// ---------------------------------------------------------------- the picture

// Box sizes, then rows: a node sits at the cursor; a leaf (or folded node)
// moves it down; a parent moves it below itself once its subtree is done.
function layout(flat, summary, headHeight) {
  const { nodes, parent, depth } = flat;
  const { visible, hidden, info } = summary;
  const lines = new Array(nodes.length);
  const metas = new Array(nodes.length);
  const height = new Array(nodes.length);
  const top = new Array(nodes.length);
  const faded = new Uint8Array(nodes.length);
  for (const i of visible) {
    const n = nodes[i];
    lines[i] = labelLines(labelOf(n));
    metas[i] = metaItems(n, info[i], statusOf(n), hidden.get(i) || 0, summary.stationCount);
    height[i] = nodeBox(n, lines[i], placeMeta(metas[i]));
    // A discarded node takes its subtree with it (the editor hides both).
    if (statusOf(n).key === 'verworfen' || (parent[i] >= 0 && faded[parent[i]])) faded[i] = 1;
  }
  const open = [];
  let cursor = headHeight;
  const close = (p) => {
    const below = top[p] + height[p] + GAP_Y;
    if (below > cursor) cursor = below;
  };
  for (const i of visible) {
    while (open.length && open[open.length - 1] !== parent[i]) close(open.pop());
    top[i] = cursor;
    if (!hidden.has(i) && childrenOf(nodes[i]).length) open.push(i);
    else cursor += height[i] + GAP_Y;
  }
  while (open.length) close(open.pop());
  const left = new Array(nodes.length);
  for (const i of visible) left[i] = MARGIN + depth[i] * COL;
  return { lines, metas, height, top, left, faded, bottom: cursor };
}

// One string per edge and per node: the parts die young, so the garbage
// collector never copies hundreds of thousands of live fragments (a 20k-node
// plan spent most of its time there).
function edgeSvg(parentLeft, parentTop, child, childLeft, childTop, cls) {
  const bus = parentLeft + BOX_W + BUS;
  return ['<path class="', cls, '" d="M', parentLeft + BOX_W, ' ', parentTop + MID, 'H', bus, 'V', childTop + MID,
    'H', childLeft, '"/>'].join('');
}

function gateSvg(parentLeft, child, childTop) {
  const gate = GATE_NAMES[child.gate] || GATE_NAMES.and;
  const x = parentLeft + BOX_W + BUS + 5;
  return ['<text class="gate" x="', x, '" y="', childTop + MID + 13, '">', gate, '</text>'].join('');
}

function nodeSvg(i, n, ref, box, geo, summary, hiddenCount) {
  const status = statusOf(n);
  const h = geo.height[i];
  const classes = ['node', 'st-' + status.key];
  if (box.needed) classes.push('needed');
  if (n.optional) classes.push('optional');
  if (hiddenCount) classes.push('folded');
  if (geo.faded[i]) classes.push('faded');
  const out = ['<g class="', classes.join(' '), '" data-ref="', esc(ref), '" data-line="', esc(n.line),
    '" data-status="', status.code === null ? '' : esc(status.code), '"'];
  if (typeof n.effectiveStatus === 'string') out.push(' data-effective="', esc(n.effectiveStatus), '"');
  if (box.first) out.push(' data-station="', stationRange(box).replace('–', '-'), '"');
  if (hiddenCount) out.push(' data-hidden="', hiddenCount, '"');
  if (cutBelow(n)) out.push(' data-cut="', cutBelow(n), '"');
  out.push(' transform="translate(', geo.left[i], ' ', geo.top[i], ')">');
  out.push('<title>', esc(tooltip(n, status, box, summary, hiddenCount)), '</title>');
  if (hiddenCount) out.push('<rect class="stack" x="5" y="5" width="', BOX_W, '" height="', h, '" rx="5"/>');
  if (box.needed) out.push('<rect class="halo" x="-4" y="-4" width="', BOX_W + 8, '" height="', h + 8, '" rx="8"/>');
  out.push('<rect class="box" width="', BOX_W, '" height="', h, '" rx="5"/>');
  if (status.code !== null) out.push('<text class="glyph" x="8" y="', PAD + 11, '">[', esc(status.code), ']</text>');
  const label = geo.lines[i];
  out.push('<text class="label" x="', TEXT_X, '" y="', PAD + 11, '">', esc(label[0]));
  for (let k = 1; k < label.length; k++) {
    out.push('<tspan x="', TEXT_X, '" dy="', LINE, '">', esc(label[k]), '</tspan>');
  }
  out.push('</text>');
  const items = geo.metas[i];
  if (items.length) {
    const metaTop = PAD + label.length * LINE + 3;
    out.push('<g class="meta">');
    for (const item of items) out.push(metaSvg(item, metaTop));
    out.push('</g>');
  }
  out.push('</g>');
  return out.join('');
}

function drawSvg(analysis, opts) {
  const flat = flatten(analysis.tree);
  const { nodes, parent } = flat;
  const summary = summarize(flat, analysis, !!opts.expand);
  const { refs, visible, hidden, info } = summary;
  const title = typeof opts.title === 'string' && opts.title ? opts.title : 'Werkbaum plan';
  // The header wraps its legend to the picture's width, which the columns set.
  let maxDepth = 0;
  for (const i of visible) if (flat.depth[i] > maxDepth) maxDepth = flat.depth[i];
  const width = Math.max(MIN_WIDTH, MARGIN * 2 + (maxDepth + 1) * COL - GAP_X);
  const head = header(summary, nodes.length, sumOf(hidden), title, width);
  const geo = layout(flat, summary, head.height);
  const height = geo.bottom + MARGIN;

  // Edges: thin ones first, so that the cheapest path is drawn on top.
  const thin = [];
  const thick = [];
  const gates = [];
  for (const i of visible) {
    const p = parent[i];
    if (p < 0) continue;
    const n = nodes[i];
    const onPath = info[i].needed && info[p].needed;
    const cls = 'edge' + (onPath ? ' needed' : '') + (n.optional ? ' optional' : '') + (geo.faded[i] ? ' faded' : '');
    (onPath ? thick : thin).push(edgeSvg(geo.left[p], geo.top[p], n, geo.left[i], geo.top[i], cls));
    if (childrenOf(nodes[p])[0] === n) gates.push(gateSvg(geo.left[p], n, geo.top[i]));
  }
  const boxes = [];
  for (const i of visible) boxes.push(nodeSvg(i, nodes[i], refs[i], info[i], geo, summary, hidden.get(i) || 0));

  return [
    '<svg xmlns="http://www.w3.org/2000/svg" class="wb-diagram" width="', width, '" height="', height,
    '" viewBox="0 0 ', width, ' ', height, '" role="img" aria-label="', esc('Plan picture: ' + title), '">',
    '<style>', STYLE, statusRules(), '</style>',
    '<rect class="bg" width="', width, '" height="', height, '"/>',
    head.svg,
    '<g class="edges">', thin.join(''), thick.join(''), '</g>',
    '<g class="gates">', gates.join(''), '</g>',
    '<g class="nodes">', boxes.join(''), '</g></svg>\n',
  ].join('');
}

function sumOf(map) {
  let total = 0;
  for (const v of map.values()) total += v;
  return total;
}

function htmlPage(svg, title) {
  return '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
    // Nothing in the page needs to load or run; a plan that slipped past the
    // escaping still could not fetch or execute anything.
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">\n' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    '<title>' + esc(title) + ' — Werkbaum plan</title>\n' +
    '<style>html,body{margin:0;background:#FFFFFF}</style>\n</head>\n<body>\n' + svg + '</body>\n</html>\n';
}

// drawPlan(analysis, {format: 'html'|'svg', expand, title}) → string.
// `analysis` is an inspect result: `tree` (required), `warnings` and `path`
// (optional: without them the picture has no warnings or path). Folded
// subtrees (notation.md §16) are drawn as one box unless `expand` is set.
export function drawPlan(analysis, options) {
  if (!analysis || typeof analysis !== 'object' || !Array.isArray(analysis.tree)) {
    throw new TypeError('diagram: the analysis must be an object with a tree array');
  }
  const opts = options || {};
  const format = opts.format == null ? 'html' : opts.format;
  if (format !== 'html' && format !== 'svg') throw new TypeError('diagram: format must be html or svg');
  const svg = drawSvg(analysis, opts);
  if (format === 'svg') return '<?xml version="1.0" encoding="UTF-8"?>\n' + svg;
  return htmlPage(svg, typeof opts.title === 'string' && opts.title ? opts.title : 'Werkbaum plan');
}
