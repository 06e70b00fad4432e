/**
 * Loaded first by every program the doc snippet test makes of a doc (test/harness/doc_programs.ts):
 * `console.log` then prints one line `doc-console <JSON>` per call, the JSON `{ line, text, plain }`:
 * the doc line that called it (programs keep the doc's line numbers) and its arguments written the
 * way the docs write values (strings quoted, `[1, 2]`, `{ a: 1 }`, `Set {"a"}`), `plain` with
 * strings unquoted as console.log prints them, for the test to compare with the line's comment.
 * The prefix keeps other output (a node:test report) apart. Runs unchanged on Deno and on Node.
 */
const print = console.log.bind(console);

console.log = (...args: unknown[]) => {
  const frame = /doc-snippets\/[^:\s]+:(\d+):\d+/.exec(new Error().stack ?? "");
  print(
    "doc-console " + JSON.stringify({
      line: frame ? Number(frame[1]) : 0,
      text: args.map(show).join(" "),
      plain: args.map((a) => typeof a === "string" ? a : show(a)).join(" "),
    }),
  );
};

function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(show).join(", ")}]`;
  if (value instanceof Set) return `Set {${[...value].map(show).join(", ")}}`;
  if (value instanceof Map) {
    return `Map {${[...value].map(([k, v]) => `${show(k)} => ${show(v)}`).join(", ")}}`;
  }
  if (value instanceof Date) return `Date(${value.toISOString()})`;
  if (value !== null && typeof value === "object" && !(value instanceof Error)) {
    const fields = Object.entries(value).map(([k, v]) => `${propertyName(k)}: ${show(v)}`);
    return `{ ${fields.join(", ")} }`;
  }
  return String(value);
}

function propertyName(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
}
