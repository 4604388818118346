// Bench-only entry (bench/engine.py): the crossing of an executor without the analysis.
// werkbaum.crossing({text}) answers the analysis of the first text it was given, so that
// a call moves a plan text in and a full answer out (the executor stringifies it) and
// does nothing else; werkbaum.crossingStringify() is the mean ms of stringifying it here.
let kept = null;

globalThis.werkbaum.crossing = ({ text }) => {
  if (kept === null) kept = globalThis.werkbaum.analyze({ text });
  return kept;
};

globalThis.werkbaum.crossingStringify = () => {
  const rounds = 50;
  const start = Date.now();
  for (let i = 0; i < rounds; i++) globalThis.werkbaumToJSON(kept);
  return (Date.now() - start) / rounds;
};
