/**
 * What catching up on concurrent typing at one place costs: two replicas of one text each type
 * N characters at its end while apart (one commit per keystroke, a block per 8 of them), then
 * each imports the other's blocks. Every insert of the one that arrives lands next to the other's
 * N characters, so each is checked against them: its neighbours must have been neighbours for its
 * author (docs/merge-rules.md, "Edits refused"), which walks what the author had not seen. The
 * time per import is the whole importBlocks call. In memory, trusted (no signature to verify).
 * With --presence, each keystroke also sets a field of another item of the writer's (a cursor, a
 * "last edited" stamp, as apps keep): commits of another item between a text's commits.
 * Every round is printed; the median per N and direction, in ms, at the end.
 * Run: ./node_modules/.bin/deno run -A bench/micro/text_catch_up.ts [--presence]
 * (or node after a build)
 */
import { Cairn, defineSchema, type RepositoryHandle } from "../../src/mod.ts";

const SIZES = [1_000, 4_000, 16_000];
const ROUNDS = 5;
const PER_BLOCK = 8;

const Doc = defineSchema({ ns: "micro_text", version: 1, fields: { body: { type: "text" } } });
const Presence = defineSchema({
  ns: "micro_presence",
  version: 1,
  fields: { at: { type: "number" } },
});
const presence = Deno.args.includes("--presence");

async function replica(): Promise<{ db: Cairn; repo: RepositoryHandle }> {
  const db = await Cairn.open({ trusted: true });
  db.register(Doc, Presence);
  return { db, repo: await db.open("/micro/text") };
}

async function typeAtEnd(repo: RepositoryHandle, letter: string, count: number): Promise<void> {
  const doc = repo.get("d", Doc)!;
  const cursor = presence ? repo.create(Presence, { at: 0 }, { key: `cursor-${letter}` }) : null;
  for (let i = 0; i < count; i++) {
    doc.insertText("body", doc.get("body")!.length, letter);
    cursor?.set("at", i);
    if (i % PER_BLOCK === PER_BLOCK - 1) await repo.flush();
  }
  await repo.flush();
}

async function round(size: number): Promise<[number, number]> {
  const [a, b] = [await replica(), await replica()];
  a.repo.create(Doc, { body: "start" }, { key: "d" });
  await b.repo.importBlocks(await a.repo.exportBlocks());
  await typeAtEnd(a.repo, "a", size);
  await typeAtEnd(b.repo, "b", size);
  const times: number[] = [];
  for (const [from, to] of [[a.repo, b.repo], [b.repo, a.repo]]) {
    const frames = await from.exportBlocks(to.versionVector());
    const start = performance.now();
    const report = await to.importBlocks(frames);
    times.push(performance.now() - start);
    if (report.rejected.length > 0) throw new Error(report.rejected[0].error.message);
  }
  if (a.repo.get("d", Doc)!.get("body") !== b.repo.get("d", Doc)!.get("body")) {
    throw new Error("the replicas differ");
  }
  await a.db.close();
  await b.db.close();
  return [times[0], times[1]];
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[sorted.length >> 1];
}

const results: string[] = [];
for (const size of SIZES) {
  const first: number[] = [];
  const second: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const [one, two] = await round(size);
    first.push(one);
    second.push(two);
    console.log(`N=${size} round ${r + 1}: ${one.toFixed(1)} ms, ${two.toFixed(1)} ms`);
  }
  results.push(
    `N=${size}: first import ${median(first).toFixed(1)} ms, second ${
      median(second).toFixed(1)
    } ms`,
  );
}
console.log(
  presence
    ? "With --presence: each keystroke also sets another item (twice the commits)."
    : "Keystrokes alone.",
);
console.log(results.join("\n"));
