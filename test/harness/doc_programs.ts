/**
 * Turns the TypeScript snippets of a Markdown doc into programs the doc snippet test
 * (test/server/doc_snippets.test.ts) type-checks and runs. The fence convention, as
 * docs/testing.md states it:
 *
 * - ` ```ts ` — runs. A doc's snippets form one program, in order: a later snippet uses the
 *   variables and imports of earlier ones, as the docs read.
 * - ` ```ts fragment ` — type-checked in place, among the program's variables, but never run: code
 *   that needs a browser, a server or a peer the doc does not make, or declarations that repeat
 *   library types. Its leading imports stay imports; the rest is the body of a function no one
 *   calls.
 * - ` ```ts new-program ` — starts a fresh program (the words combine: ` ```ts new-program fragment `).
 *
 * Every line of a program sits on the line of the doc it comes from, so a type error or a stack
 * trace in a program names the doc's line. Line 1 (a doc's title, never code) loads
 * doc_console.ts, which records what each `console.log` prints.
 */

export const FENCE_WORDS = ["fragment", "new-program"] as const;

/** A `console.log(…); // comment` line of a snippet that runs: what the comment says it prints. */
export interface Expectation {
  line: number;
  /** The comment (with the comment lines right after it), up to a ` — ` that starts prose. */
  text: string;
}

export interface DocProgram {
  doc: string;
  /** The scratch file's name, e.g. `docs-api.1.ts`. */
  name: string;
  /** The doc line of the program's first fence. */
  line: number;
  source: string;
  /** False when every snippet is a fragment: the program is only type-checked. */
  runs: boolean;
  expectations: Expectation[];
}

/** The import on line 1 of every program, relative to build/doc-snippets/. */
export const PRELUDE = 'import "../../test/harness/doc_console.ts";';

const IMPORT_START = /^import\b/;

export function docPrograms(doc: string, markdown: string): DocProgram[] {
  const lines = markdown.split("\n");
  const programs: (DocProgram & { body: string[] })[] = [];
  let current: DocProgram & { body: string[] } | undefined;

  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)(.*)$/.exec(lines[i]);
    if (!open) continue;
    const fenceLine = i + 1;
    const close = lines.findIndex((line, j) => j > i && line.trimEnd() === "```");
    if (close < 0) throw new Error(`${doc}:${fenceLine}: this code fence is never closed`);
    if (open[1] === "ts") {
      const words = open[2].trim().split(/\s+/).filter(Boolean);
      const unknown = words.find((w) => !(FENCE_WORDS as readonly string[]).includes(w));
      if (unknown) {
        throw new Error(
          `${doc}:${fenceLine}: unknown fence word "${unknown}" (known: ${FENCE_WORDS.join(", ")})`,
        );
      }
      if (!current || words.includes("new-program")) {
        current = {
          doc,
          name: `${doc.replace(/\.md$/, "").replaceAll("/", "-")}.${programs.length + 1}.ts`,
          line: fenceLine,
          source: "",
          runs: false,
          expectations: [],
          body: lines.map(() => ""),
        };
        current.body[0] = PRELUDE;
        programs.push(current);
      }
      const snippet = { from: i + 1, to: close }; // 0-based indexes of the code lines
      if (words.includes("fragment")) addFragment(current.body, lines, snippet, fenceLine);
      else {
        for (let j = snippet.from; j < snippet.to; j++) current.body[j] = lines[j];
        current.runs = true;
        current.expectations.push(...expectations(lines, snippet));
      }
    }
    i = close;
  }
  return programs.map(({ body, ...program }) => ({ ...program, source: body.join("\n") + "\n" }));
}

/** A fragment: its leading imports as they are, the rest inside a function nothing calls. */
function addFragment(
  body: string[],
  lines: string[],
  { from, to }: { from: number; to: number },
  fenceLine: number,
): void {
  let j = from;
  let inImport = false;
  for (; j < to; j++) {
    if (!inImport && !IMPORT_START.test(lines[j]) && lines[j].trim() !== "") break;
    if (IMPORT_START.test(lines[j])) inImport = true;
    if (inImport && /;\s*(\/\/.*)?$/.test(lines[j])) inImport = false;
    body[j] = lines[j];
  }
  if (j === to) return;
  body[j] = `async function fragment${fenceLine}() { ${lines[j]}`;
  for (j++; j < to; j++) body[j] = lines[j];
  body[to] = "}"; // on the closing fence's line
}

/** The `console.log` lines of a snippet that carry a comment saying what they print. */
function expectations(lines: string[], { from, to }: { from: number; to: number }): Expectation[] {
  const found: Expectation[] = [];
  for (let j = from; j < to; j++) {
    const call = lines[j].indexOf("console.log(");
    const comment = lines[j].indexOf(" // ", call);
    if (call < 0 || comment < 0) continue;
    const parts = [lines[j].slice(comment + 4)];
    for (let k = j + 1; k < to && /^\s*\/\/ /.test(lines[k]); k++) {
      parts.push(lines[k].trim().slice(3));
    }
    found.push({ line: j + 1, text: parts.join(" ").split(" — ")[0].trim() });
  }
  return found;
}

/** Whether a printed line is what a comment says: same text up to spacing, "…" matching anything. */
export function printedAsSaid(said: string, printed: string): boolean {
  const pattern = normalize(said)
    .split("…")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${pattern}$`, "s").test(normalize(printed));
}

function normalize(text: string): string {
  return text.replace(/\s+/g, " ").replace(/([[{(]) /g, "$1").replace(/ ([\]})])/g, "$1").trim();
}
