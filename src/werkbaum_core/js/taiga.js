// Taiga ticket references and status mapping (notation.md §9, §17.4, §18).
// Network and URL helpers of upstream are not part of this bundle.

// A namespace import: a checkout's parser.js without these names still links,
// and the engine's contract check names what it lacks (docs/engine-contract.md).
import * as parser from './parser.js';

const { STATUS_BY_CODE } = parser;

export const TICKET_ID_RE = /^(?:US|T)-\d+$/;

const REF_PARTS_RE = /^(US|T)-(\d+)$/;
// A ref inside a label counts only as a free-standing word (§9).
const LABEL_REF_RE = / #((?:US|T)-\d+) /;

export function refParts(ref) {
  const m = typeof ref === 'string' ? REF_PARTS_RE.exec(ref) : null;
  return m ? { kind: m[1], nr: Number(m[2]) } : null;
}

export function refToken(kind, nr) {
  return '#' + kind + '-' + nr;
}

export function slugToken(slug) {
  return '&taiga.' + slug;
}

export function ticketRefOf(node) {
  if (!node) return null;
  const id = node.id;
  // TICKET_ID_RE needs a leading U or T; checking it first spares the regex
  // run for almost every id.
  if (typeof id === 'string' && (id.charCodeAt(0) === 85 || id.charCodeAt(0) === 84) && TICKET_ID_RE.test(id)) {
    return id;
  }
  const label = node.label || '';
  // No '#', no match: skips building the padded string and a regex run.
  if (typeof label === 'string' && !label.includes('#')) return null;
  const m = LABEL_REF_RE.exec(' ' + label + ' ');
  return m ? m[1] : null;
}

// True when the reader can see the ref in the node's title, so a UI need not
// show it a second time.
export function refVisibleInLabel(node, ref) {
  if (!node || !ref) return false;
  return (' ' + (node.label || '') + ' ').includes(' #' + ref + ' ');
}

// Map<slug, [{ref, node}]> in document order; nodes without a slug (own or
// inherited, as given by slugMap) or without a ref are skipped.
export function collectTicketRefs(roots, slugMap) {
  const out = new Map();
  const stack = [];
  for (let i = (roots || []).length - 1; i >= 0; i--) stack.push(roots[i]);
  while (stack.length) {
    const node = stack.pop();
    const slug = slugMap ? slugMap.get(node) : undefined;
    const ref = slug ? ticketRefOf(node) : null;
    if (ref) {
      if (!out.has(slug)) out.set(slug, []);
      out.get(slug).push({ ref, node });
    }
    const kids = node.children || [];
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
  }
  return out;
}

// Inserts ` token` at the visible end of a line: before a `%%` comment (its
// leading whitespace stays with the comment) and before a ` \` continuation
// marker. Lines without visible content are returned unchanged.
export function appendToken(line, token) {
  const at = line.indexOf('%%');
  const body = at < 0 ? line : line.slice(0, at);
  let core = body.slice(0, endWithoutBlanks(body));
  if (core.endsWith('\\')) {
    const beforeMarker = core.slice(0, endWithoutBlanks(core.slice(0, -1)));
    // Only a backslash after whitespace (or alone) continues the line (§2.2).
    if (beforeMarker.length < core.length - 1 || beforeMarker === '') core = beforeMarker;
  }
  if (core.trim() === '') return line;
  return core + ' ' + token + line.slice(core.length);
}

// Index after the last character that is not a space or tab. A loop instead
// of /[ \t]+$/, which backtracks quadratically on long runs of blanks.
function endWithoutBlanks(s) {
  let end = s.length;
  while (end > 0 && (s[end - 1] === ' ' || s[end - 1] === '\t')) end--;
  return end;
}

// ---------------------------------------------------------------------------
// §18: Taiga columns <-> status boxes

export const TAIGA_STATUS_CODE = {
  'new': ' ',
  'in progress': '~',
  'ready for test': '/',
  'done': 'x',
  'archived': '^',
};

export const TAIGA_STATUS_NAME = {
  ' ': 'New',
  '~': 'In progress',
  '/': 'Ready for test',
  'x': 'Done',
  '^': 'Archived',
};

// Column names compare case- and whitespace-insensitively, so "In Progress",
// "in  progress" and "InProgress" are one column.
const squash = (name) => name.toLowerCase().replace(/\s+/g, '');

const CODE_BY_SQUASHED = new Map(
  Object.keys(TAIGA_STATUS_CODE).map((name) => [squash(name), TAIGA_STATUS_CODE[name]]),
);

export function mapTaigaStatus(name) {
  if (typeof name !== 'string') return null;
  const code = CODE_BY_SQUASHED.get(squash(name));
  return code === undefined ? null : STATUS_BY_CODE[code];
}

export function taigaStatusName(code) {
  if (typeof code !== 'string') return null;
  const key = code === 'X' ? 'x' : code;
  return Object.prototype.hasOwnProperty.call(TAIGA_STATUS_NAME, key) ? TAIGA_STATUS_NAME[key] : null;
}

// True when the Taiga column maps to a box other than the node's own.
// Unknown column names never count as a divergence (they are not guessed).
export function ticketDiverges(node, statusName) {
  const mapped = mapTaigaStatus(statusName);
  if (!mapped) return false;
  const own = node && node.status ? node.status.code : null;
  return own !== mapped.code;
}
