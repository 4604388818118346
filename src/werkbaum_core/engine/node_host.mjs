// Persistent node host for the werkbaum engine: loads the entry modules of a
// module-set directory, then answers JSON-line requests on stdin:
//   {"id": n, "entry": "analyze", "payload": {...}}  ->  {"id": n, "result": ...}
// An exception becomes {"id": n, "error": "<message>"}; the process keeps running.
// A module that fails to load is reported as {"error": "loading <entry> failed: ..."}
// (node's own message, and the module's line where node names it), then the host exits.
//
// Answers go to the file descriptor named by the first argument, a pipe of their own: stdout is where module code
// writes (console.log, process.stdout.write), and the executor treats it like stderr.
// They are written synchronously, so an answer is whole before the next request is
// read and before a failed load exits.
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { writeSync } from 'node:fs';

const [answersFd, directory, ...entries] = process.argv.slice(2);
const ANSWERS = Number(answersFd);

function send(line) {
  const bytes = Buffer.from(line + '\n', 'utf8');
  for (let done = 0; done < bytes.length; ) {
    done += writeSync(ANSWERS, bytes, done, bytes.length - done);
  }
}

function describe(err) {
  return String(err && err.message !== undefined ? err.name + ': ' + err.message : err);
}

function located(err) {
  const first = String((err && err.stack) || '').split('\n')[0];
  const at = /^file:\/\/.*\/([^/]+):(\d+)$/.exec(first);
  return describe(err) + (at ? ` (${at[1]}:${at[2]})` : '');
}

for (const entry of entries) {
  try {
    await import(pathToFileURL(join(directory, entry)).href);
  } catch (err) {
    send(JSON.stringify({ error: `loading ${entry} failed: ${located(err)}` }));
    process.exit(1);
  }
}
send(JSON.stringify({ ready: true, exports: globalThis.werkbaumExports || {} }));

// Lines are cut out of the input chunks directly: node's readline runs a
// line-break regex over every chunk (0.2 ms per 67 KB request in a profile of
// 400 analyses; node's CPU per analysis of werkbaum.werkbaum 5.25 -> 4.87 ms).
function answer(line) {
  if (!line) return;
  let id = null;
  let reply;
  try {
    const request = JSON.parse(line);
    id = request.id;
    const result = globalThis.werkbaum[request.entry](request.payload);
    const body = globalThis.werkbaumToJSON(result === undefined ? null : result);
    reply = '{"id":' + JSON.stringify(id) + ',"result":' + body + '}';
  } catch (err) {
    reply = JSON.stringify({ id, error: describe(err) });
  }
  send(reply);
}

process.stdin.setEncoding('utf8');
let pending = [];
for await (const chunk of process.stdin) {
  let start = 0;
  for (let end = chunk.indexOf('\n'); end >= 0; end = chunk.indexOf('\n', start)) {
    pending.push(chunk.slice(start, end));
    answer(pending.length === 1 ? pending[0] : pending.join(''));
    pending = [];
    start = end + 1;
  }
  if (start < chunk.length) pending.push(chunk.slice(start));
}
answer(pending.join(''));
