// The V8 floor for goal 2: the project's own facade.js in a plain node process,
// timing globalThis.werkbaum.analyze({text}) on the plan.
//   node bench/v8_floor.mjs PLAN_FILE COUNT BUDGET_MS [WARMUP]
// prints one JSON line {warm, uncached, stringify, phases} of millisecond samples:
//   uncached  the text plus a unique %% comment line each call: the whole analysis,
//             after WARMUP (default 60) analyses of other texts so that V8's JIT is
//             warm (the floor; node's V8 is not steady after 20)
//   warm      the same text again (facade's run cache hit: output shaping only)
//   stringify JSON.stringify of one warm result (what a host would send on)
//   phases    parse / cheapest path / shaping of one uncached text, for profiles
// Every loop stops at COUNT samples or BUDGET_MS, whichever comes first.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import '../src/werkbaum_core/js/facade.js';
import * as parser from '../src/werkbaum_core/js/parser.js';
import * as model from '../src/werkbaum_core/js/model.js';

const [file, countArg, budgetArg, warmupArg] = process.argv.slice(2);
const text = readFileSync(file, 'utf8');
const count = Number(countArg || 20);
const budget = Number(budgetArg || 20000);
const analyze = globalThis.werkbaum.analyze;
let nonce = 0;
const fresh = () => text + (text.endsWith('\n') ? '' : '\n') + `%% floor ${nonce++}\n`;

function samples(fn) {
  const out = [];
  const deadline = performance.now() + budget;
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    fn();
    out.push(performance.now() - start);
    if (performance.now() > deadline) break;
  }
  return out;
}

const WARMUP = Number(warmupArg || 60); // JIT_WARMUP in bench/stdio.py
for (let i = 0; i < WARMUP; i++) analyze({ text: fresh() });
analyze({ text });
const warm = samples(() => analyze({ text }));
const uncached = samples(() => analyze({ text: fresh() }));
const result = analyze({ text });
const stringify = samples(() => JSON.stringify(result));

const t0 = performance.now();
const parsed = parser.parse(fresh());
const t1 = performance.now();
const visible = parsed.roots.filter((r) => !(r.status && r.status.key === 'verworfen'));
model.computeCheapPlan(visible);
const t2 = performance.now();
const phases = { parse: t1 - t0, cheapPlan: t2 - t1 };

process.stdout.write(JSON.stringify({ warm, uncached, stringify, phases }) + '\n');
