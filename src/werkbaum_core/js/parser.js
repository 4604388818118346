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
const MARK_RE = /(^|\s)&([\p{L}\p{N}._-]+)/gu;
const DEPS_RE = /(^|\s):#([\p{L}\p{N}._-]+(?:,#[\p{L}\p{N}._-]+)*)/gu;
const FOCUS_RE = /(^|\s)!!!(?=\s|$)/g;
const DESC_HEADER_RE = /^#([\p{L}\p{N}._-]+):?\s*$/u;
// The size, tag and id tokens of §4.2 are the matches of
//   SIZE_RE = /(^|\s)\((XXL|XS|XL|S|M|L)\)/gi   (the last one counts)
//   TAG_RE  = /@([\p{L}\p{N}._-]+)/gu          (all of them)
//   ID_RE   = /(^|\s)#([\p{L}\p{N}._-]+)(?::(?=\s|$))?/u   (the first one)
// extractTokens finds the same matches with lastSizeToken, removeTags and
// firstIdToken, which try only the positions of '(', '@' and '#'.

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
  return readLogicalLines(text, true);
}

// parse() reads the records only, so lines without continuations share one
// empty cont list there instead of allocating one each.
const NO_CONT = [];

function readLogicalLines(text, freshCont) {
  const phys = asText(text).split('\n');
  const out = [];
  let inDesc = false;
  for (let i = 0; i < phys.length; i++) {
    const rec = { raw: stripComment(phys[i]), line: i + 1, cont: freshCont ? [] : NO_CONT };
    if (!inDesc && isSeparator(rec.raw)) inDesc = true;
    if (!inDesc && endsWithBackslash(rec.raw)) {
      if (!freshCont) rec.cont = [];
      i = joinContinuations(rec, phys, i);
    }
    out.push(rec);
  }
  return out;
}

// True when the last character before trailing blanks is a backslash: the
// only case in which joinContinuations can change anything (most lines are
// not continued, and QuickJS pays for every array and join).
function endsWithBackslash(raw) {
  let end = raw.length;
  while (end > 0) {
    const c = raw.charCodeAt(end - 1);
    if (c !== 32 && c !== 9) break;
    end--;
  }
  return end > 0 && raw.charCodeAt(end - 1) === 92;
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

// trimStart removes exactly what /^\s+/ matches (WhiteSpace and
// LineTerminator), without a regex run per line.
function isShortDescLine(raw) {
  return isShortDescHead(raw.trimStart());
}

// The same test on a line already stripped of its leading blanks.
function isShortDescHead(ts) {
  return ts[0] === '"' && (ts[1] === ' ' || ts[1] === '\t');
}

// Removes text[start, end) and returns the rest.
function cut(text, start, end) {
  return text.slice(0, start) + text.slice(end);
}

// extractTokens' result: one reused record, read at once by parseNodeLine
// (QuickJS pays for every object it creates, and this runs once per line).
const TOKENS = { url: null, size: null, tags: null, marks: null, id: null, deps: null, focus: false, label: '' };

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
  const sizeAt = lastSizeToken(rest);
  if (sizeAt) {
    size = sizeAt[1].toUpperCase();
    rest = cut(rest, sizeAt.index, sizeAt.index + sizeAt[0].length);
  }

  const tags = [];
  if (rest.includes('@')) rest = removeTags(rest, tags);

  const marks = [];
  if (rest.includes('&')) {
    rest = rest.replace(MARK_RE, (_all, lead, mark) => {
      marks.push(mark);
      return lead;
    });
  }

  let id = null;
  const idAt = firstIdToken(rest);
  if (idAt) {
    id = idAt[1];
    rest = cut(rest, idAt.index, idAt.index + idAt[0].length);
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

  const out = TOKENS;
  out.url = url;
  out.size = size;
  out.tags = tags;
  out.marks = marks;
  out.id = id;
  out.deps = deps;
  out.focus = focus;
  out.label = squashBlanks(rest);
  return out;
}

// The token scans below find what the global regexes of §4.2 find, but only
// try the positions of the trigger character: QuickJS tries a regex at every
// start position, and its generic replace() with a callback is slow.

// JavaScript's \s (WhiteSpace and LineTerminator), by code unit.
function isBlank(c) {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028
    || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

// The last match of SIZE_RE as [token, size] with index = the position of
// '(' (the match without its leading blank), or null. SIZE_RE's matches
// cannot overlap (each holds one blank, before its '('), so its last match is
// the rightmost '(' that follows a blank or the start and opens a size token.
const SIZE_AT_RE = /\((XXL|XS|XL|S|M|L)\)/iy;
function lastSizeToken(rest) {
  for (let at = rest.lastIndexOf('('); at >= 0; at = at > 0 ? rest.lastIndexOf('(', at - 1) : -1) {
    if (at > 0 && !isBlank(rest.charCodeAt(at - 1))) continue;
    SIZE_AT_RE.lastIndex = at;
    const m = SIZE_AT_RE.exec(rest);
    if (m) return m;
  }
  return null;
}

// rest.replace(TAG_RE, '') collecting the tags: each '@' followed by at least
// one tag character starts a match; the scan resumes after it.
const TAG_BODY_RE = /[\p{L}\p{N}._-]+/uy;
function removeTags(rest, tags) {
  let out = '';
  let from = 0;
  let at = rest.indexOf('@');
  while (at >= 0) {
    TAG_BODY_RE.lastIndex = at + 1;
    const m = TAG_BODY_RE.exec(rest);
    if (m) {
      tags.push(m[0]);
      out += rest.slice(from, at);
      from = TAG_BODY_RE.lastIndex;
      at = rest.indexOf('@', from);
    } else {
      at = rest.indexOf('@', at + 1);
    }
  }
  return from ? out + rest.slice(from) : rest;
}

// The first match of ID_RE as [token, id] with index = the position of '#'
// (the match without its leading blank), or null: the first '#' at the start
// or after a blank that is followed by an id character.
const ID_BODY_RE = /([\p{L}\p{N}._-]+)(?::(?=\s|$))?/uy;
function firstIdToken(rest) {
  for (let at = rest.indexOf('#'); at >= 0; at = rest.indexOf('#', at + 1)) {
    if (at > 0 && !isBlank(rest.charCodeAt(at - 1))) continue;
    // ASCII ids are read directly; the regex handles the rest of Unicode.
    let end = at + 1;
    while (end < rest.length && isAsciiIdChar(rest.charCodeAt(end))) end++;
    if (end < rest.length && rest.charCodeAt(end) >= 128) {
      ID_BODY_RE.lastIndex = at + 1;
      const m = ID_BODY_RE.exec(rest);
      if (m) return { 0: '#' + m[0], 1: m[1], index: at };
      continue;
    }
    if (end === at + 1) continue;
    const id = rest.slice(at + 1, end);
    // The optional ':' counts only before a blank or the end.
    if (rest.charCodeAt(end) === 58 && (end + 1 === rest.length || isBlank(rest.charCodeAt(end + 1)))) end++;
    return { 0: rest.slice(at, end), 1: id, index: at };
  }
  return null;
}

// [A-Za-z0-9._-]: the ASCII part of the id character class.
function isAsciiIdChar(c) {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 46 || c === 95 || c === 45;
}

// rest.replace(/\s+/g, ' ').trim(): trimming first gives the same string,
// and most labels then have no blank run left to replace.
function squashBlanks(rest) {
  const t = rest.trim();
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c === 32 ? t.charCodeAt(i + 1) === 32 : isBlank(c)) return t.replace(/\s+/g, ' ');
  }
  return t;
}

// Returns {node, width, boxChar} (one reused record, read at once by parse)
// or null for a line that is ignored (§4.2).
const NODE_LINE = { node: null, width: 0, boxChar: undefined };

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
  tokens.tags = tokens.marks = tokens.deps = null; // no references kept in the reused record
  const out = NODE_LINE;
  out.node = node;
  out.width = indentWidth(m[1]);
  out.boxChar = boxChar;
  return out;
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
// Checks after the tree is built

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
function scanDescLine(rec, state, idFirst, infoOf, warnings) {
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
      const info = infoOf(node);
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
  const recs = readLogicalLines(text, false);
  const roots = [];
  const warnings = [];
  const idFirst = new Map(); // id -> node of its first assignment
  // node -> {parts, lines}, created on a node's first description part or
  // line: most nodes have none, and a node without one keeps desc and
  // descLines null, which is what assembling empty lists gives.
  const descInfo = new Map();
  const infoOf = (node) => {
    let info = descInfo.get(node);
    if (!info) descInfo.set(node, (info = { parts: [], lines: [] }));
    return info;
  };
  const nodes = []; // every node in document order, which is pre-order
  const widths = []; // the open nodes' indentation widths, innermost last
  const open = []; // the open nodes
  let lastNode = null;
  let inDesc = false;
  const descState = { block: null };

  for (const rec of recs) {
    if (inDesc) {
      scanDescLine(rec, descState, idFirst, infoOf, warnings);
      continue;
    }
    if (isSeparator(rec.raw)) {
      inDesc = true;
      continue;
    }
    const head = rec.raw.trimStart();
    if (head === '') continue;

    if (isShortDescHead(head)) {
      if (!lastNode) {
        warnings.push({ type: 'descStray', line: rec.line });
        continue;
      }
      const info = infoOf(lastNode);
      addDescPart(info, head.slice(2).trim());
      // Lines joined onto a short line are not recorded (upstream test).
      addDescLine(info, rec.line);
      continue;
    }

    const parsed = parseNodeLine(rec);
    if (!parsed) continue;
    const { node, width, boxChar } = parsed;
    parsed.node = null; // the reused record holds no node past this line

    while (widths.length && widths[widths.length - 1] >= width) {
      widths.pop();
      open.pop();
    }
    if (open.length) open[open.length - 1].children.push(node);
    else roots.push(node);
    widths.push(width);
    open.push(node);
    nodes.push(node);
    lastNode = node;
    if (rec.cont.length) descInfo.set(node, { parts: [], lines: rec.cont.slice() });

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

  // One pass in pre-order; the warnings keep the order of three passes:
  // unknown deps, then xor conflicts (roots first), then size conflicts.
  const xorWarnings = [];
  const sizeWarnings = [];
  checkXorGroup(roots, xorWarnings);
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i];
    const deps = node.deps;
    for (let d = 0; d < deps.length; d++) {
      if (!idFirst.has(deps[d])) warnings.push({ type: 'unknownDep', line: node.line, id: deps[d] });
    }
    if (node.children.length) {
      checkXorGroup(node.children, xorWarnings);
      checkSize(node, sizeWarnings);
    }
  }
  for (const w of xorWarnings) warnings.push(w);
  for (const w of sizeWarnings) warnings.push(w);

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
  for (const rec of readLogicalLines(text, false)) {
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
