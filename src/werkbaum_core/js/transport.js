// Result transport for the executors (not a notation module).
// QuickJS's native JSON.stringify recurses on the C stack and overflows near
// 4,000 levels, which a legal 2,000-level plan tree reaches. toJSONText keeps
// the fast native path and falls back to an iterative serialiser that gives
// byte-identical output when the native one runs out of stack.

function scalarText(value) {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string': return JSON.stringify(value);
    case 'number': return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean': return value ? 'true' : 'false';
    default: return undefined;
  }
}

function isContainer(value) {
  return value !== null && typeof value === 'object';
}

function iterativeStringify(root) {
  const out = [];
  // Frames: {value, keys (objects) or null (arrays), index, wrote (any member yet)}
  const stack = [];
  const open = (value) => {
    if (typeof value.toJSON === 'function') value = value.toJSON();
    if (!isContainer(value)) {
      out.push(scalarText(value) ?? 'null');
      return;
    }
    const isArray = Array.isArray(value);
    out.push(isArray ? '[' : '{');
    stack.push({ value, keys: isArray ? null : Object.keys(value), index: 0, wrote: false });
  };
  open(root);
  while (stack.length) {
    const frame = stack[stack.length - 1];
    const size = frame.keys ? frame.keys.length : frame.value.length;
    if (frame.index >= size) {
      out.push(frame.keys ? '}' : ']');
      stack.pop();
      continue;
    }
    const i = frame.index++;
    const member = frame.keys ? frame.value[frame.keys[i]] : frame.value[i];
    if (frame.keys && (member === undefined || typeof member === 'function' || typeof member === 'symbol')) {
      continue; // omitted like JSON.stringify does
    }
    if (frame.wrote) out.push(',');
    frame.wrote = true;
    if (frame.keys) out.push(JSON.stringify(frame.keys[i]), ':');
    if (isContainer(member)) open(member);
    else out.push(scalarText(member) ?? 'null');
  }
  return out.join('');
}

export function toJSONText(value) {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (err instanceof RangeError) return iterativeStringify(value);
    throw err;
  }
}

globalThis.werkbaumToJSON = toJSONText;
