// Node runner for the notation conformance cases.
//   node tests/js/run_conformance.mjs [module-dir] [cases.json]
// Copies the module set (default src/werkbaum_core/js) and conformance.js into
// a temporary directory, imports them there, runs every case and prints the
// failures plus a final "N passed, M failed" line; exit code 1 on failure.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const moduleDir = path.resolve(process.argv[2] || path.join(repo, 'src', 'werkbaum_core', 'js'));
const casesFile = path.resolve(process.argv[3] || path.join(repo, 'tests', 'data', 'notation-cases.json'));

// Modules the facade imports; a missing one gets an empty stand-in in the
// temp directory only (a colleague may still be writing it).
const FACADE_IMPORTS = ['parser.js', 'model.js', 'taiga.js', 'warnings.js', 'i18n.js', 'live.js', 'edit.js'];
const STAND_IN_OK = new Set(['live.js', 'edit.js']);

function stageModules() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'werkbaum-conf-'));
  for (const f of fs.readdirSync(moduleDir)) {
    if (f.endsWith('.js') || f.endsWith('.mjs')) fs.copyFileSync(path.join(moduleDir, f), path.join(dir, f));
  }
  fs.copyFileSync(path.join(here, 'conformance.js'), path.join(dir, 'conformance.js'));
  fs.writeFileSync(path.join(dir, 'package.json'), '{"type": "module"}\n');
  for (const f of FACADE_IMPORTS) {
    if (fs.existsSync(path.join(dir, f))) continue;
    if (!STAND_IN_OK.has(f)) throw new Error('module set lacks ' + f);
    fs.writeFileSync(path.join(dir, f), '// empty stand-in created by run_conformance.mjs\nexport {};\n');
    console.log('note: ' + f + ' is missing; using an empty stand-in');
  }
  return dir;
}

async function main() {
  const dir = stageModules();
  try {
    await import(pathToFileURL(path.join(dir, 'conformance.js')).href);
    const cases = JSON.parse(fs.readFileSync(casesFile, 'utf8'));
    let passed = 0;
    let failed = 0;
    for (const kase of cases) {
      const { ok, mismatches } = globalThis.werkbaum.conformanceCheck(kase);
      if (ok) { passed++; continue; }
      failed++;
      console.log('FAIL ' + kase.name + (kase.derived ? ' (derived)' : ''));
      for (const m of mismatches) console.log('  - ' + m);
    }
    console.log(passed + ' passed, ' + failed + ' failed');
    process.exitCode = failed ? 1 : 0;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exitCode = 1;
});
