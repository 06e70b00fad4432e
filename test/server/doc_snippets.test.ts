/**
 * Every TypeScript snippet of README.md and docs/*.md is type-checked, and run unless it is a
 * fragment (fence convention: test/harness/doc_programs.ts, docs/testing.md). Each doc's snippets
 * become programs in build/doc-snippets/, on the doc's own line numbers.
 *
 * - Type-checked by `deno check` against the sources (the deno.json import map resolves
 *   "cairndb"), in both runtimes.
 * - Run in a fresh temporary directory, so databases they store vanish: on Deno by `deno run`
 *   against the sources; on Node by Node itself against the built package (the programs sit in the
 *   project, whose package.json lets `import … from "cairndb"` name its own dist/).
 * - Every program must exit 0, and each `console.log(…); // what it prints` line must have
 *   printed exactly what its comment says.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import process from "node:process";
import { type DocProgram, docPrograms, PRELUDE, printedAsSaid } from "../harness/doc_programs.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";

// Tests run from the project root in Deno and in Node.
const SCRATCH = resolve("build/doc-snippets");
const DENO = resolve("node_modules/.bin/deno");
const ON_DENO = "Deno" in globalThis;

const DOCS = [
  "README.md",
  ...(await readdir("docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`),
];

/** What doc_console.ts reports of one console.log call. */
interface Printed {
  line: number;
  text: string;
  plain: string;
}

async function writePrograms(doc: string): Promise<DocProgram[]> {
  const programs = docPrograms(doc, await readFile(doc, "utf8"));
  await mkdir(SCRATCH, { recursive: true });
  for (const program of programs) await writeFile(`${SCRATCH}/${program.name}`, program.source);
  return programs;
}

function run(
  command: string,
  args: string[],
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => stdout += chunk);
    child.stderr.on("data", (chunk) => stderr += chunk);
    child.on("error", fail);
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
}

/** Output with each program's file named as the doc it comes from (their lines are the same). */
function inDocTerms(output: string, programs: DocProgram[]): string {
  for (const { name, doc } of programs) {
    output = output.replace(
      new RegExp(`\\S*build/doc-snippets/${name.replaceAll(".", "\\.")}`, "g"),
      doc,
    );
  }
  return output;
}

test("the fence convention: one program per doc, fragments not run, new programs, doc lines kept", () => {
  const doc = [
    "# A doc", // 1
    "```ts", // 2
    "const a = 1;", // 3
    "console.log(a); // 1 — and prose", // 4
    "```", // 5
    "```ts fragment", // 6
    'import type { Item } from "cairndb";', // 7
    "const item: Item = a;", // 8
    "```", // 9
    "```sh", // 10
    "ls", // 11
    "```", // 12
    "```ts new-program fragment", // 13
    "const a = 2;", // 14
    "```", // 15
  ].join("\n");
  const [first, second, ...more] = docPrograms("docs/x.md", doc);
  assert.equal(more.length, 0);
  assert.deepEqual(first.source.split("\n").slice(0, 10), [
    PRELUDE,
    "",
    "const a = 1;",
    "console.log(a); // 1 — and prose",
    "",
    "",
    'import type { Item } from "cairndb";',
    "async function fragment6() { const item: Item = a;",
    "}",
    "",
  ]);
  assert.deepEqual({ ...first, source: undefined }, {
    doc: "docs/x.md",
    name: "docs-x.1.ts",
    line: 2,
    source: undefined,
    runs: true,
    expectations: [{ line: 4, text: "1" }],
  });
  assert.equal(second.line, 13);
  assert.equal(second.runs, false);
  assert.equal(second.source.split("\n")[13], "async function fragment13() { const a = 2;");
  assert.throws(
    () => docPrograms("docs/x.md", "# A doc\n\n```ts fragmnet\nconst a = 1;\n```\n"),
    /docs\/x\.md:3: unknown fence word "fragmnet"/,
  );
});

test("a comment says what was printed: up to spacing, with … for any text", () => {
  assert.ok(printedAsSaid("[995, 985]", "[995,  985]"));
  assert.ok(printedAsSaid('{ index: "count" }', '{index: "count"}'));
  assert.ok(
    printedAsSaid(
      "E_QUERY_FAILED: item … (and 1000 others)",
      "E_QUERY_FAILED: item 2s-x (and 1000 others)",
    ),
  );
  assert.ok(
    !printedAsSaid(
      "E_QUERY_FAILED: item … (and 999 others)",
      "E_QUERY_FAILED: item 2s-x (and 1000 others)",
    ),
  );
  assert.ok(!printedAsSaid("9", "999"));
  assert.ok(!printedAsSaid("[1, 2]", "[1, 2, 3]"));
});

test("every TypeScript snippet of README.md and docs/*.md type-checks (deno check)", async () => {
  const programs = (await Promise.all(DOCS.map(writePrograms))).flat();
  assert.ok(programs.length > 0, "the docs have snippets");
  const files = programs.map((program) => `${SCRATCH}/${program.name}`);
  const checked = await run(DENO, ["check", ...files], process.cwd());
  assert.equal(checked.code, 0, inDocTerms(checked.stdout + checked.stderr, programs));
});

for (const doc of DOCS) {
  test(`${doc}: its snippets run and print what their comments say`, async () => {
    const programs = (await writePrograms(doc)).filter((program) => program.runs);
    for (const program of programs) {
      const where = `${doc} (the program from line ${program.line})`;
      const file = `${SCRATCH}/${program.name}`;
      const ran = await withTemp((cwd) =>
        ON_DENO
          ? run(DENO, ["run", "-A", "--config", resolve("deno.json"), file], cwd)
          : run(process.execPath, [file], cwd)
      );
      const output = inDocTerms(ran.stdout + ran.stderr, programs);
      assert.equal(ran.code, 0, `${where} failed:\n${output}`);
      const printed = ran.stdout.split("\n").filter((l) => l.startsWith("doc-console "))
        .map((l) => JSON.parse(l.slice("doc-console ".length)) as Printed);
      for (const { line, text } of program.expectations) {
        const atLine = printed.filter((p) => p.line === line);
        assert.ok(atLine.length > 0, `${doc}:${line} printed nothing; its comment says ${text}`);
        for (const got of atLine) {
          assert.ok(
            printedAsSaid(text, got.text) || printedAsSaid(text, got.plain),
            `${doc}:${line} printed ${got.text}; its comment says ${text}`,
          );
        }
      }
    }
  });
}

async function withTemp<T>(fn: (cwd: string) => Promise<T>): Promise<T> {
  let result: T | undefined;
  await withTempDirectory("doc-snippet", async (cwd) => void (result = await fn(cwd)));
  return result!;
}
