// Test-only entry: diagram.js's drawPlan called directly with any analysis, the
// way an MCP App page calls it with a tool result (tests/render/test_module.py).
import { drawPlan } from './diagram.js';

globalThis.werkbaum.drawPlan = (payload) => drawPlan(payload.analysis, payload.options);
