// view.js — the MCP App view of werkbaum_inspect (ext-apps 2026-01-26): the
// host shows this page in a sandboxed frame next to the tool call, and the
// page draws the call's result with diagram.js, the drawing of `werkbaum
// render`. It talks to the host alone, as JSON-RPC 2.0 over postMessage:
//
//   view → host  ui/initialize (request), then ui/notifications/initialized;
//                ui/notifications/size-changed whenever its size changes
//   host → view  ui/notifications/tool-input (the call's arguments: the title),
//                ui/notifications/tool-result (the CallToolResult: the picture),
//                ui/notifications/tool-cancelled, …/host-context-changed;
//                ping and ui/resource-teardown (answered with {})
//
// It fetches nothing and calls no tool: everything it draws arrives in the
// tool result. The picture is built as a string by drawPlan, whose output is
// escaped and script-free, and the page's own CSP allows no script but this one.
import { drawPlan } from './diagram.js';

const PROTOCOL_VERSION = '2026-01-26';
const DEFAULT_MAX_HEIGHT = 720; // px: without a host limit the view scrolls inside this
const MIN_PLAN_HEIGHT = 120;
const XML_DECLARATION = /^<\?xml[^>]*\?>\n?/;
const METHOD_NOT_FOUND = -32601;

const root = document.documentElement;
const bar = document.getElementById('bar');
const expand = document.getElementById('expand');
const note = document.getElementById('note');
const plan = document.getElementById('plan');

const state = {
  nextId: 1,
  pending: new Map(),
  initialized: false,
  args: null, // the tool call's arguments, once the host sent them
  analysis: null, // the inspect result being shown
  context: {}, // the host context (containerDimensions above all)
  reported: '',
};

// ---------------------------------------------------------------- the bridge

function post(message) {
  window.parent.postMessage(Object.assign({ jsonrpc: '2.0' }, message), '*');
}

function request(method, params) {
  const id = state.nextId++;
  post({ id, method, params });
  return new Promise((resolve, reject) => state.pending.set(id, { resolve, reject }));
}

function notify(method, params) {
  post({ method, params });
}

const NOTIFICATIONS = {
  'ui/notifications/tool-input': (params) => {
    state.args = params && typeof params.arguments === 'object' ? params.arguments : null;
    if (state.analysis) draw();
  },
  'ui/notifications/tool-result': showResult,
  'ui/notifications/tool-cancelled': (params) => {
    const reason = params && typeof params.reason === 'string' && params.reason ? ': ' + params.reason : '';
    say('The werkbaum_inspect call was cancelled' + reason + '.');
  },
  'ui/notifications/host-context-changed': (params) => {
    Object.assign(state.context, params || {});
    fit();
  },
};

function answer(message) {
  if (message.method === 'ping' || message.method === 'ui/resource-teardown') {
    post({ id: message.id, result: {} });
  } else {
    post({ id: message.id, error: { code: METHOD_NOT_FOUND, message: 'Method not found: ' + message.method } });
  }
}

function onMessage(event) {
  if (event.source !== window.parent) return; // the host (or its sandbox proxy) only
  const message = event.data;
  if (!message || typeof message !== 'object' || message.jsonrpc !== '2.0') return;
  if (typeof message.method === 'string') {
    if (message.id !== undefined && message.id !== null) answer(message);
    else if (Object.hasOwn(NOTIFICATIONS, message.method)) NOTIFICATIONS[message.method](message.params);
    return;
  }
  const waiting = state.pending.get(message.id);
  if (!waiting) return;
  state.pending.delete(message.id);
  if (message.error) waiting.reject(new Error(String(message.error.message || 'error')));
  else waiting.resolve(message.result || {});
}

// ---------------------------------------------------------------- the result

function say(text) {
  note.textContent = text;
  note.hidden = false;
  report();
}

function firstText(result) {
  const content = Array.isArray(result.content) ? result.content : [];
  const block = content.find((c) => c && c.type === 'text' && typeof c.text === 'string');
  return block ? block.text : '';
}

function parsed(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

// The structured content, or (from a host that passes only the text) the same
// JSON from the text content: the server puts it in both.
function analysisOf(result) {
  const data = result.structuredContent;
  return data && typeof data === 'object' ? data : parsed(firstText(result));
}

function showResult(result) {
  if (!result || typeof result !== 'object') return say('The host sent no tool result.');
  if (result.isError) {
    const body = parsed(firstText(result));
    const message = body && body.error && body.error.message ? body.error.message : firstText(result);
    return say('werkbaum_inspect failed: ' + (message || 'no message'));
  }
  const analysis = analysisOf(result);
  if (!analysis || !Array.isArray(analysis.tree)) {
    const parts = analysis && typeof analysis === 'object' ? Object.keys(analysis).join(', ') : 'nothing';
    return say('Nothing to draw: this werkbaum_inspect result has no tree (it holds ' + parts +
      '). Inspect with the tree included (the default) to see the plan.');
  }
  state.analysis = analysis;
  draw();
}

// The picture's title: the file name of the source, as `werkbaum render` has it.
function titleOf(args) {
  const source = args && typeof args.source === 'string' ? args.source : '';
  const name = source.split(/[?#]/)[0].replace(/\/+$/, '').split('/').pop();
  return name || undefined;
}

function draw() {
  let svg;
  try {
    svg = drawPlan(state.analysis, { format: 'svg', expand: expand.checked, title: titleOf(state.args) });
  } catch (error) {
    return say('The picture could not be drawn: ' + error.message);
  }
  plan.innerHTML = svg.replace(XML_DECLARATION, '');
  note.hidden = true;
  bar.hidden = !expand.checked && !plan.querySelector('g.node[data-hidden]');
  fit();
}

// ---------------------------------------------------------------- size

// The host sizes the frame: a fixed height is filled, a maximum (or, without
// one, DEFAULT_MAX_HEIGHT) bounds it, and the picture scrolls inside.
function fit() {
  const dims = state.context.containerDimensions || {};
  const fixed = typeof dims.height === 'number' ? dims.height : null;
  const limit = fixed !== null ? fixed : typeof dims.maxHeight === 'number' ? dims.maxHeight : DEFAULT_MAX_HEIGHT;
  const room = Math.max(MIN_PLAN_HEIGHT, limit - bar.offsetHeight - (note.hidden ? 0 : note.offsetHeight));
  plan.style.maxHeight = room + 'px';
  plan.style.height = fixed !== null ? room + 'px' : '';
  report();
}

function report() {
  if (!state.initialized) return;
  const box = document.body.getBoundingClientRect();
  const width = Math.ceil(Math.max(plan.scrollWidth, bar.scrollWidth, note.scrollWidth));
  const height = Math.ceil(box.height);
  const key = width + 'x' + height;
  if (key === state.reported) return;
  state.reported = key;
  notify('ui/notifications/size-changed', { width, height });
}

// ---------------------------------------------------------------- start

async function start() {
  window.addEventListener('message', onMessage);
  expand.addEventListener('change', () => state.analysis && draw());
  if (typeof ResizeObserver === 'function') new ResizeObserver(report).observe(document.body);
  let result;
  try {
    result = await request('ui/initialize', {
      appCapabilities: { availableDisplayModes: ['inline'] },
      appInfo: { name: 'werkbaum-plan-view', title: 'Werkbaum plan', version: root.dataset.version || '' },
      protocolVersion: PROTOCOL_VERSION,
    });
  } catch (error) {
    return say('The host did not start the view: ' + error.message);
  }
  Object.assign(state.context, result.hostContext || {});
  state.initialized = true;
  notify('ui/notifications/initialized', {});
  fit();
}

start();
