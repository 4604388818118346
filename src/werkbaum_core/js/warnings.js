// Warning objects -> human-readable text (notation.md §15.3).
// `t(key, vars)` is the message lookup, e.g. the English one in i18n.js.

// Message parameters per warning type, taken from the warning's fields.
const PARAMS = {
  mixedGate: (w) => ({ line: w.line, label: w.label }),
  unknownStatus: (w) => ({ line: w.line, code: w.code }),
  xorConflict: (w) => ({ line: w.line, label: w.label }),
  duplicateId: (w) => ({ line: w.line, id: w.id, firstLine: w.firstLine }),
  unknownDep: (w) => ({ line: w.line, id: w.id }),
  unknownDesc: (w) => ({ line: w.line, id: w.id }),
  descStray: (w) => ({ line: w.line }),
  sizeConflict: (w) => ({ line: w.line, size: w.size }),
  assigneeOverload: (w) => ({ tag: w.tag, share: w.share, stations: w.stations, total: w.totalStations }),
  cheapApprox: () => ({}),
};

// mixedGate is the one type whose key does not follow `<type>Warn`.
function messageKey(type) {
  return type === 'mixedGate' ? 'mixedWarn' : type + 'Warn';
}

function fallbackText(w) {
  const line = w && w.line != null ? w.line : '?';
  return (w && w.type) + ' (' + line + ')';
}

function messageText(w, t, value) {
  const type = w && w.type;
  if (typeof type !== 'string' || !Object.prototype.hasOwnProperty.call(PARAMS, type)) {
    return null;
  }
  const key = messageKey(type);
  const params = PARAMS[type](w);
  for (const name of Object.keys(params)) params[name] = value(params[name]);
  const text = typeof t === 'function' ? t(key, params) : key;
  // A lookup without a message for this key usually echoes the key.
  return typeof text === 'string' && text !== '' && text !== key ? text : null;
}

export function warningText(w, t) {
  const text = messageText(w, t, (v) => v);
  return text === null ? fallbackText(w) : text;
}

const HTML_ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch]);
}

// For HTML: the values taken from the plan are escaped, the message template is
// not (it is ours, and may carry markup of its own), as in the editor.
export function formatWarning(w, t) {
  const text = messageText(w, t, (v) => (v == null ? v : escapeHtml(v)));
  return text === null ? escapeHtml(fallbackText(w)) : text;
}
