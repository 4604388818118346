// Werkbaum notation parser (notation.md §2–§12, §15, §17).
//
// The parser is fault tolerant: it never throws for any input text. Problems
// become warnings. Every tree walk is iterative, because plans may nest
// thousands of levels deep and QuickJS runs with a small native stack.

// ---------------------------------------------------------------------------
// Tables

export const SIZE_RANK = { XS: 0, S: 1, M: 2, L: 3, XL: 4, XXL: 5 };

// Ranges are used only by the size-conflict check (§12.1, D62).
export function sizeMin(size) {
  return 2 ** SIZE_RANK[size];
}

export function sizeMax(size) {
  return size === 'XXL' ? Infinity : 2 ** (SIZE_RANK[size] + 1);
}

// Names are German, like upstream's; keys are upstream's internal keys.
export const STATUS_BY_CODE = {
  '?': { code: '?', key: 'idee', name: 'Idee' },
  ' ': { code: ' ', key: 'geplant', name: 'Geplant' },
  '!': { code: '!', key: 'highrisk', name: 'Hohes Risiko' },
  '~': { code: '~', key: 'arbeit', name: 'In Arbeit' },
  '/': { code: '/', key: 'durchstich', name: 'Durchstich' },
  'x': { code: 'x', key: 'fertig', name: 'Fertig' },
  '^': { code: '^', key: 'prod', name: 'Produktiv' },
  '-': { code: '-', key: 'verworfen', name: 'Verworfen' },
};

const REALIZED_KEYS = new Set(['arbeit', 'durchstich', 'fertig', 'prod']);

// ---------------------------------------------------------------------------
// Regular expressions (exactly as in the notation reference unless noted)

const SEP_RE = /^[ \t]*-{3,}[ \t]*$/;

// §4.1, with one deliberate change: the final group is `[\s\S]*` instead of
// `.*`. For lines without CR/U+2028/U+2029 both are identical; with such a
// character the original may fail to match at all, and the parser must not
// fall over on it. The rest is normalised by the label step anyway.
const LINE_RE =
  /^([ \t]*)([-|+]|=(?=[ \t]))?\s*(?:([><])(?=[ \t])\s*)?(?:\[([^\]])\]\s*)?(?:([><])(?=[ \t])\s*)?([\s\S]*)$/;

const URL_RE = /https?:\/\/\S+/i;
const SIZE_RE = /(^|\s)\((XXL|XS|XL|S|M|L)\)/gi;
const TAG_RE = /@([\p{L}\p{N}._-]+)/gu;
const MARK_RE = /(^|\s)&([\p{L}\p{N}._-]+)/gu;
const ID_RE = /(^|\s)#([\p{L}\p{N}._-]+)(?::(?=\s|$))?/u;
const DEPS_RE = /(^|\s):#([\p{L}\p{N}._-]+(?:,#[\p{L}\p{N}._-]+)*)/gu;
const FOCUS_RE = /(^|\s)!!!(?=\s|$)/g;
const DESC_HEADER_RE = /^#([\p{L}\p{N}._-]+):?\s*$/u;

const hasOwn = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);

// Equivalent to raw.replace(/%%.*$/, '') (§2.1). Because `.` stops at CR,
// U+2028 and U+2029, that regex cuts at the first %% after the last such
// character; computing this directly avoids quadratic backtracking.
function stripComment(raw) {
  const first = raw.indexOf('%%');
  if (first < 0) return raw;
  const term = Math.max(raw.lastIndexOf('\r'), raw.lastIndexOf('\u2028'), raw.lastIndexOf('\u2029'));
  const at = term < first ? first : raw.indexOf('%%', term + 1);
  return at < 0 ? raw : raw.slice(0, at);
}

function indentWidth(indent) {
  let width = indent.length;
  for (let i = 0; i < indent.length; i++) if (indent.charCodeAt(i) === 9) width++;
  return width;
}

// QuickJS tries a regex at every start position even when it is anchored;
// the substring pre-check keeps very long lines (deep indentation) cheap.
function isSeparator(raw) {
  return raw.includes('---') && SEP_RE.test(raw);
}

function asText(text) {
  if (typeof text === 'string') return text;
  return text == null ? '' : String(text);
}

// ---------------------------------------------------------------------------
// §2: comments and continuation lines

export function logicalLines(text) {
  const phys = asText(text).split('\n');
  const out = [];
  let inDesc = false;
  for (let i = 0; i < phys.length; i++) {
    const rec = { raw: stripComment(phys[i]), line: i + 1, cont: [] };
    if (!inDesc && isSeparator(rec.raw)) inDesc = true;
    if (!inDesc) i = joinContinuations(rec, phys, i);
    out.push(rec);
  }
  return out;
}

// The continuation loop of §2.2. The logical line is kept as a list of
// non-empty pieces rather than one growing string, so that a chain of many
// continued lines costs linear time; the result is the same string.
// Returns the index of the last physical line consumed.
function joinContinuations(rec, phys, i) {
  const parts = rec.raw === '' ? [] : [rec.raw];
  while (dropContinuation(parts)) {
    if (i + 1 >= phys.length) break;
    const last = parts.length ? parts[parts.length - 1].slice(-1) : '';
    if (last !== '' && last !== ' ' && last !== '\t') parts.push(' ');
    const next = stripComment(phys[++i]).replace(/^[ \t]*/, '');
    if (next !== '') parts.push(next);
    rec.cont.push(i + 1);
  }
  rec.raw = parts.join('');
  return i;
}

// Same effect as `raw.replace(CONT, '$1')` with CONT = /(^|[ \t])\\[ \t]*$/
// (§2.2) on the concatenated pieces: removes the final backslash and the
// blanks after it. Returns false, changing nothing, when CONT does not match.
function dropContinuation(parts) {
  let p = parts.length - 1;
  let end = p >= 0 ? parts[p].length : 0;
  while (p >= 0) {
    const s = parts[p];
    while (end > 0 && (s[end - 1] === ' ' || s[end - 1] === '\t')) end--;
    if (end > 0) break;
    p--;
    end = p >= 0 ? parts[p].length : 0;
  }
  if (p < 0 || parts[p][end - 1] !== '\\') return false;
  const k = end - 1;
  const before = k > 0 ? parts[p][k - 1] : p > 0 ? parts[p - 1].slice(-1) : '';
  if (before !== '' && before !== ' ' && before !== '\t') return false;
  if (k > 0) {
    parts[p] = parts[p].slice(0, k);
    parts.length = p + 1;
  } else {
    parts.length = p;
  }
  return true;
}

// ---------------------------------------------------------------------------
// §3/§4: one node line

function isShortDescLine(raw) {
  const ts = raw.replace(/^\s+/, '');
  return ts[0] === '"' && /[ \t]/.test(ts[1] || '');
}

// Removes text[start, end) and returns the rest.
function cut(text, start, end) {
  return text.slice(0, start) + text.slice(end);
}

// §4.2, steps 3–9, on the rest after indentation, gate, fold and box.
// Each step first checks for its trigger character: most lines carry few
// tokens, and a substring test is far cheaper than a Unicode regex scan.
function extractTokens(rest) {
  let url = null;
  const urlMatch = rest.includes('://') ? URL_RE.exec(rest) : null;
  if (urlMatch) {
    url = urlMatch[0];
    rest = cut(rest, urlMatch.index, urlMatch.index + url.length);
  }

  // Only the last free-standing size token counts (D68).
  let size = null;
  let lastSize = null;
  if (rest.includes('(')) {
    SIZE_RE.lastIndex = 0;
    for (let m = SIZE_RE.exec(rest); m; m = SIZE_RE.exec(rest)) lastSize = m;
  }
  if (lastSize) {
    size = lastSize[2].toUpperCase();
    const start = lastSize.index + lastSize[1].length;
    rest = cut(rest, start, lastSize.index + lastSize[0].length);
  }

  const tags = [];
  if (rest.includes('@')) {
    rest = rest.replace(TAG_RE, (_all, tag) => {
      tags.push(tag);
      return '';
    });
  }

  const marks = [];
  if (rest.includes('&')) {
    rest = rest.replace(MARK_RE, (_all, lead, mark) => {
      marks.push(mark);
      return lead;
    });
  }

  let id = null;
  const idMatch = rest.includes('#') ? ID_RE.exec(rest) : null;
  if (idMatch) {
    id = idMatch[2];
    const start = idMatch.index + idMatch[1].length;
    rest = cut(rest, start, idMatch.index + idMatch[0].length);
  }

  const deps = [];
  if (rest.includes(':#')) {
    rest = rest.replace(DEPS_RE, (_all, lead, list) => {
      for (const part of list.split(',')) deps.push(part.slice(part[0] === '#' ? 1 : 0));
      return lead;
    });
  }

  let focus = false;
  if (rest.includes('!!!')) {
    rest = rest.replace(FOCUS_RE, (_all, lead) => {
      focus = true;
      return lead;
    });
  }

  const label = rest.replace(/\s+/g, ' ').trim();
  return { url, size, tags, marks, id, deps, focus, label };
}

// Returns {node, width, boxChar} or null for a line that is ignored (§4.2).
function parseNodeLine(rec) {
  const m = LINE_RE.exec(rec.raw);
  if (!m) return null; // cannot happen with the [\s\S]* tail; kept as a guard
  const tokens = extractTokens(m[6]);
  let label = tokens.label;
  let labelFromId = false;
  if (label === '') {
    if (tokens.id === null) return null;
    label = '#' + tokens.id;
    labelFromId = true;
  }
  const gate = m[2];
  const boxChar = m[4];
  let status = null;
  if (boxChar !== undefined) {
    const code = boxChar.toLowerCase();
    if (hasOwn(STATUS_BY_CODE, code)) status = STATUS_BY_CODE[code];
  }
  const node = {
    label,
    labelFromId,
    type: gate === '|' ? 'or' : gate === '=' ? 'xor' : 'and',
    optional: gate === '+',
    fold: m[3] || m[5] || null,
    status,
    url: tokens.url,
    size: tokens.size,
    tags: tokens.tags,
    marks: tokens.marks,
    id: tokens.id,
    deps: tokens.deps,
    desc: null,
    descLines: null,
    focus: tokens.focus,
    children: [],
    line: rec.line,
  };
  return { node, width: indentWidth(m[1]), boxChar };
}

// ---------------------------------------------------------------------------
// Description assembly (§8.3)

const PARA = null; // paragraph-break marker inside a node's description parts

function addDescPart(info, part) {
  info.parts.push(part);
}

function addDescLine(info, line) {
  info.lines.push(line);
}

function assembleDesc(parts) {
  let start = 0;
  let end = parts.length;
  while (start < end && parts[start] === PARA) start++;
  while (end > start && parts[end - 1] === PARA) end--;
  if (start === end) return null;
  return parts.slice(start, end).map((p) => (p === PARA ? '' : p)).join('\n');
}

// ---------------------------------------------------------------------------
// Tree walks (iterative)

// Calls visit(node) for every node in pre-order (document order).
function walkPreOrder(roots, visit) {
  const stack = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push(roots[i]);
  while (stack.length) {
    const node = stack.pop();
    visit(node);
    const kids = node.children;
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
  }
}

function isRealizedNode(node) {
  return node.status !== null && REALIZED_KEYS.has(node.status.key);
}

function isDiscardedNode(node) {
  return node.status !== null && node.status.key === 'verworfen';
}

// §11: every realized child after the first in an XOR group.
function checkXorGroup(children, warnings) {
  if (children.length === 0 || children[0].type !== 'xor') return;
  let realized = 0;
  for (const child of children) {
    if (!isRealizedNode(child)) continue;
    realized++;
    if (realized > 1) warnings.push({ type: 'xorConflict', line: child.line, label: child.label });
  }
}

// §12.2 (D62).
function checkSize(node, warnings) {
  if (!node.size || node.size === 'XXL' || node.children.length === 0) return;
  const counted = node.children.filter((c) => c.size && !c.optional && !isDiscardedNode(c));
  if (counted.length === 0) return;
  const firstType = node.children[0].type;
  const disjunctive = firstType === 'or' || firstType === 'xor';
  let need = disjunctive ? Infinity : 0;
  for (const c of counted) {
    need = disjunctive ? Math.min(need, sizeMin(c.size)) : need + sizeMin(c.size);
  }
  if (need >= sizeMax(node.size)) {
    node.sizeConflict = true;
    warnings.push({ type: 'sizeConflict', line: node.line, size: node.size });
  }
}

// ---------------------------------------------------------------------------
// parse()

// Handles one logical line of the description part (§8.2). `state.block` is
// null (no block), {info: null} (unknown id, swallowing) or {info}.
function scanDescLine(rec, state, idFirst, descInfo, warnings) {
  const raw = rec.raw;
  if (isSeparator(raw)) return;
  const block = state.block;
  if (raw.trim() === '') {
    if (block && block.info) {
      const info = block.info;
      if (info.parts.length === 0 || info.parts[info.parts.length - 1] !== PARA) addDescPart(info, PARA);
      addDescLine(info, rec.line);
    }
    return;
  }
  if (/^[ \t]/.test(raw)) {
    if (!block) warnings.push({ type: 'descStray', line: rec.line });
    else if (block.info) {
      addDescPart(block.info, raw.trim());
      addDescLine(block.info, rec.line);
    }
    return;
  }
  const header = DESC_HEADER_RE.exec(raw);
  if (header) {
    const node = idFirst.get(header[1]);
    if (node) {
      const info = descInfo.get(node);
      addDescLine(info, rec.line);
      state.block = { info };
    } else {
      warnings.push({ type: 'unknownDesc', line: rec.line, id: header[1] });
      state.block = { info: null };
    }
    return;
  }
  warnings.push({ type: 'descStray', line: rec.line });
  state.block = null;
}

export function parse(text) {
  const recs = logicalLines(text);
  const roots = [];
  const warnings = [];
  const idFirst = new Map(); // id -> node of its first assignment
  const descInfo = new Map(); // node -> {parts, lines}
  const stack = []; // [{width, node}], innermost last
  let lastNode = null;
  let inDesc = false;
  const descState = { block: null };

  for (const rec of recs) {
    if (inDesc) {
      scanDescLine(rec, descState, idFirst, descInfo, warnings);
      continue;
    }
    if (isSeparator(rec.raw)) {
      inDesc = true;
      continue;
    }
    if (rec.raw.trim() === '') continue;

    if (isShortDescLine(rec.raw)) {
      if (!lastNode) {
        warnings.push({ type: 'descStray', line: rec.line });
        continue;
      }
      const info = descInfo.get(lastNode);
      addDescPart(info, rec.raw.replace(/^\s+/, '').slice(2).trim());
      // Lines joined onto a short line are not recorded (upstream test).
      addDescLine(info, rec.line);
      continue;
    }

    const parsed = parseNodeLine(rec);
    if (!parsed) continue;
    const { node, width, boxChar } = parsed;

    while (stack.length && stack[stack.length - 1].width >= width) stack.pop();
    if (stack.length) stack[stack.length - 1].node.children.push(node);
    else roots.push(node);
    stack.push({ width, node });
    lastNode = node;
    descInfo.set(node, { parts: [], lines: rec.cont.slice() });

    if (boxChar !== undefined && node.status === null) {
      warnings.push({ type: 'unknownStatus', line: rec.line, code: boxChar });
    }
    if (node.id !== null) {
      const first = idFirst.get(node.id);
      if (first) warnings.push({ type: 'duplicateId', line: rec.line, id: node.id, firstLine: first.line });
      else idFirst.set(node.id, node);
    }
  }

  for (const [node, info] of descInfo) {
    node.desc = assembleDesc(info.parts);
    node.descLines = info.lines.length ? info.lines : null;
  }

  walkPreOrder(roots, (node) => {
    for (const dep of node.deps) {
      if (!idFirst.has(dep)) warnings.push({ type: 'unknownDep', line: node.line, id: dep });
    }
  });
  checkXorGroup(roots, warnings);
  walkPreOrder(roots, (node) => checkXorGroup(node.children, warnings));
  walkPreOrder(roots, (node) => checkSize(node, warnings));

  return { roots, warnings };
}

// ---------------------------------------------------------------------------
// §17.1 / §17.2: rewriting the head of one line

const FOLD_HEAD_RE =
  /^([ \t]*(?:[-|+]|=(?=[ \t]))?[ \t]*)(?:[><](?=[ \t])[ \t]*)?((?:\[[^\]]\][ \t]*)?)(?:[><](?=[ \t])[ \t]*)?/;
const BOX_HEAD_RE =
  /^([ \t]*(?:[-|+]|=(?=[ \t]))?[ \t]*)((?:[><](?=[ \t])[ \t]*)?)((?:\[[^\]]\][ \t]*)?)((?:[><](?=[ \t])[ \t]*)?)/;

export function setFoldMark(line, mark) {
  const m = FOLD_HEAD_RE.exec(line);
  return m[1] + m[2] + (mark ? mark + ' ' : '') + line.slice(m[0].length);
}

export function setStatusBox(line, code) {
  const m = BOX_HEAD_RE.exec(line);
  return m[1] + m[2] + (code != null ? '[' + code + '] ' : '') + m[4] + line.slice(m[0].length);
}

// ---------------------------------------------------------------------------
// §17.3: id shorthand (#.kc under #prod-stage becomes #prod-stage.kc)

const FREE_ID_RE = /(^|\s)#([\p{L}\p{N}._-]+)/u;
const SHORT_ID_RE = /^\.[^.]/;

function commentFree(line) {
  const at = line.indexOf('%%');
  return at < 0 ? line : line.slice(0, at);
}

// Physical line indexes (0-based) that the parser treats as continuation
// lines, plus the index of the separator line (or the line count).
function treeLayout(text) {
  const contLines = new Set();
  let sepIndex = -1;
  for (const rec of logicalLines(text)) {
    for (const c of rec.cont) contLines.add(c - 1);
    if (sepIndex < 0 && isSeparator(rec.raw)) sepIndex = rec.line - 1;
  }
  return { contLines, sepIndex };
}

function nearestFullId(stack) {
  for (let i = stack.length - 1; i >= 0; i--) {
    const id = stack[i].id;
    if (id && id[0] !== '.') return id;
  }
  return null;
}

export function expandShortIds(text) {
  if (typeof text !== 'string') return text;
  const lines = text.split('\n');
  const { contLines, sepIndex } = treeLayout(text);
  const end = sepIndex < 0 ? lines.length : sepIndex;
  const stack = []; // [{width, id}]; nodes without ids too, for nesting
  let changed = false;

  for (let i = 0; i < end; i++) {
    if (contLines.has(i)) continue;
    const line = lines[i];
    const body = commentFree(line);
    if (body.trim() === '' || isShortDescLine(body)) continue;
    const width = indentWidth(/^[ \t]*/.exec(body)[0]);
    while (stack.length && stack[stack.length - 1].width >= width) stack.pop();

    let id = null;
    const m = FREE_ID_RE.exec(body);
    if (m) {
      id = m[2];
      const parentId = SHORT_ID_RE.test(id) ? nearestFullId(stack) : null;
      if (parentId) {
        id = parentId + id;
        const start = m.index + m[1].length;
        lines[i] = body.slice(0, start) + '#' + id + body.slice(m.index + m[0].length) + line.slice(body.length);
        changed = true;
      }
    }
    stack.push({ width, id });
  }
  return changed ? lines.join('\n') : text;
}

export function shortIdClosed(line) {
  if (typeof line !== 'string') return false;
  const body = commentFree(line);
  const m = FREE_ID_RE.exec(body);
  if (!m || !SHORT_ID_RE.test(m[2])) return false;
  return body[m.index + m[0].length] === ':';
}
