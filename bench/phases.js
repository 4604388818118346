// Bench-only entry module (copied next to facade.js by Engine.create's
// extra_entries): werkbaum.phases({text}) -> milliseconds per pipeline phase
// of one analysis of a text not seen before, on whichever executor loads it.
// shaping is facade analyze on a cached pipeline run; the facade caches runs of
// texts up to RUN_CACHE_CHARS only, so for longer texts it is the whole analyze
// minus the pipeline phases timed before (an estimate, flagged by estimated).
import { runPipeline, mixedGateWarnings, visibleRoots } from './facade.js';
import * as parser from './parser.js';
import * as model from './model.js';

const RUN_CACHE_CHARS = 1000000;
const now = () => (globalThis.performance ? globalThis.performance.now() : Date.now());

function phases(payload) {
  const text = payload.text;
  const t = {};
  let start = now();
  const parsed = parser.parse(text);
  t.parse = now() - start;
  const visible = visibleRoots(parsed.roots);
  start = now();
  const plan = model.computeCheapPlan(visible);
  t.cheapestPath = now() - start;
  start = now();
  model.overloadedAssignee(visible, plan.set);
  mixedGateWarnings(visible);
  t.warnings = now() - start;
  runPipeline(text); // the facade's run cache now holds this text: analyze only shapes
  start = now();
  const result = globalThis.werkbaum.analyze({ text });
  t.shaping = now() - start;
  t.estimated = text.length > RUN_CACHE_CHARS;
  if (t.estimated) t.shaping -= t.parse + t.cheapestPath + t.warnings;
  start = now();
  globalThis.werkbaumToJSON(result);
  t.toJSON = now() - start;
  return t;
}

globalThis.werkbaum.phases = phases;
