// pictures.js — the engine entry of `werkbaum render`, loaded after facade.js
// by the engines that draw (an extra entry; the servers' engines skip it):
// `picture` analyses a text exactly as `analyze` does and draws the result
// with diagram.js, in ONE call (the analysis never crosses into Python).
import { drawPlan } from './diagram.js';

const FORMATS = ['html', 'svg'];

function pictureEntry(payload) {
  if (!payload || typeof payload !== 'object') throw new TypeError('picture: payload must be an object');
  if (typeof payload.text !== 'string') throw new TypeError('picture: text must be a string');
  if (payload.id != null && typeof payload.id !== 'string') throw new TypeError('picture: id must be a string');
  if (payload.title != null && typeof payload.title !== 'string') throw new TypeError('picture: title must be a string');
  const format = payload.format == null ? 'html' : payload.format;
  if (!FORMATS.includes(format)) throw new TypeError('picture: format must be one of ' + FORMATS.join(', '));
  const request = { text: payload.text };
  if (payload.id != null) request.id = payload.id;
  const analysis = globalThis.werkbaum.analyze(request);
  if (analysis.error) return analysis; // unknown id: the analyze entry's answer
  return { picture: drawPlan(analysis, { format, expand: !!payload.expand, title: payload.title }) };
}

globalThis.werkbaum.picture = pictureEntry;
