// cheap_plan_probe.js — test-side entry for tests/core/test_cheap_plan.py. It
// is copied next to facade.js at test time and adds
// werkbaum.cheapPlanProbe({text, methods}) -> {<method>: {needed, exact, ms, search}}:
// the cheapest path of the text's visible roots (discarded roots filtered, as
// the facade does) by each method of model._cheapPlanBy, with the needed set
// as sorted line numbers. The method 'default' is computeCheapPlan itself.
import * as parser from './parser.js';
import * as model from './model.js';

function visibleRoots(text) {
  return parser.parse(text).roots.filter((r) => !(r.status && r.status.key === 'verworfen'));
}

function describe(plan, ms) {
  const needed = [];
  for (const n of plan.set) needed.push(n.line);
  needed.sort((a, b) => a - b);
  const out = { needed, exact: plan.exact, ms };
  if (plan.search) out.search = plan.search; // {groups, assignments}; not from 'default'
  return out;
}

function cheapPlanProbe({ text, methods }) {
  const out = {};
  for (const method of methods) {
    // A fresh parse per method: no method may profit from another's memos
    // on the node objects.
    const roots = visibleRoots(text);
    const start = Date.now();
    const plan = method === 'default' ? model.computeCheapPlan(roots) : model._cheapPlanBy(roots, method);
    out[method] = describe(plan, Date.now() - start);
  }
  return out;
}

globalThis.werkbaum = Object.assign(globalThis.werkbaum || {}, { cheapPlanProbe });
