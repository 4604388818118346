// English warning texts (this project's own wording; notation.md §15.3, §23).
// Each message is one sentence: what is wrong, then what to do about it.

export const MESSAGES = {
  mixedWarn:
    'Line {line}: the children of "{label}" mix gate kinds; use only - and + (all of), only | (any of) or only = (exactly one) within one group.',
  unknownStatusWarn:
    'Line {line}: unknown status box [{code}]; use one of ? ~ / x ^ - ! or a space, or remove the box.',
  xorConflictWarn:
    'Line {line}: "{label}" is a second started or finished alternative in an exactly-one (=) group; keep only one of them realized, or use | if several may be.',
  duplicateIdWarn:
    'Line {line}: id #{id} is already used on line {firstLine}; rename one of them, because dependencies and descriptions go to the first.',
  unknownDepWarn:
    'Line {line}: dependency :#{id} points to no node; give a node the id #{id} or correct the reference.',
  unknownDescWarn:
    'Line {line}: description block #{id} matches no node; correct the id or give a node the id #{id}.',
  descStrayWarn:
    'Line {line}: this line belongs to no node; put " description lines below a node line, and after the first --- write only #id headers with indented text (node lines belong above the ---).',
  sizeConflictWarn:
    'Line {line}: the sized required parts below this ({size}) node add up to more than a {size} can hold; raise its size or make the parts smaller.',
  assigneeOverloadWarn:
    '@{tag} carries {share}% of the remaining work on the cheapest path ({stations} of {total} open stations); spread the work or re-plan.',
  cheapApproxWarn:
    'The cheapest path is only approximate because too many alternative groups are coupled by dependencies; fewer dependencies between alternatives make it exact.',
};

// Looks up `key` and fills `{name}` placeholders from `vars`. An unknown key
// comes back unchanged, and a placeholder without a value stays visible.
export function t(key, vars) {
  const template = Object.prototype.hasOwnProperty.call(MESSAGES, key) ? MESSAGES[key] : String(key);
  return template.replace(/\{(\w+)\}/g, (whole, name) => {
    const known = vars != null && Object.prototype.hasOwnProperty.call(vars, name);
    return known && vars[name] != null ? String(vars[name]) : whole;
  });
}
