// Persistent node host for the werkbaum engine: loads the entry modules of a
// module-set directory, then answers JSON-line requests on stdin:
//   {"id": n, "entry": "analyze", "payload": {...}}  ->  {"id": n, "result": ...}
// An exception becomes {"id": n, "error": "<message>"}; the process keeps running.
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const [directory, ...entries] = process.argv.slice(2);
for (const entry of entries) {
  await import(pathToFileURL(join(directory, entry)).href);
}
process.stdout.write(JSON.stringify({ ready: true, exports: globalThis.werkbaumExports || {} }) + '\n');

const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of input) {
  if (!line) continue;
  let id = null;
  let reply;
  try {
    const request = JSON.parse(line);
    id = request.id;
    const result = globalThis.werkbaum[request.entry](request.payload);
    const body = globalThis.werkbaumToJSON(result === undefined ? null : result);
    reply = '{"id":' + JSON.stringify(id) + ',"result":' + body + '}';
  } catch (err) {
    reply = JSON.stringify({ id, error: String(err && err.message !== undefined ? err.name + ': ' + err.message : err) });
  }
  process.stdout.write(reply + '\n');
}
