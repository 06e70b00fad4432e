import { test } from "node:test";
import assert from "node:assert/strict";
import { oneUser, sharedStart, twoUsers } from "../../bench/lib/crdt_inputs.ts";
import { replayPlan } from "../../bench/lib/replay_plan.ts";
import {
  parseTrace,
  replayOnString,
  sequentialIn,
  sequentialPrefix,
  type SequentialTrace,
} from "../../bench/lib/traces.ts";
import { checkPlan } from "../harness/replay_check.ts";

async function gzipped(value: unknown): Promise<Uint8Array> {
  const stream = new Blob([JSON.stringify(value)]).stream()
    .pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

test("a sequential trace is read from gzipped JSON and replays to its end text", async () => {
  const trace = await parseTrace(
    "tiny.json.gz",
    await gzipped({
      startContent: "",
      endContent: "hello!",
      txns: [{ patches: [[0, 0, "helo"]] }, { patches: [[3, 0, "l"], [5, 0, "!"]] }],
    }),
  );
  assert.equal(trace.kind, "sequential");
  const sequential = trace as SequentialTrace;
  assert.equal(replayOnString(sequential.startContent, sequential.txns), "hello!");
  assert.equal(sequentialPrefix(sequential, 1).endContent, "helo");
});

test("a file that is not a trace is refused by name", async () => {
  await assert.rejects(
    parseTrace("other.json.gz", await gzipped({ txns: [{ patches: [[0, "x", 1]] }] })),
    /other\.json\.gz is not an editing trace/,
  );
});

test("code-point positions become UTF-16 positions where characters take two units", () => {
  // "a😀b": the emoji is one code point and two UTF-16 units.
  const trace: SequentialTrace = {
    kind: "sequential",
    name: "emoji",
    startContent: "",
    endContent: "a😀c",
    txns: [[[0, 0, "a😀b"]], [[2, 1, "c"]]],
  };
  const utf16 = sequentialIn(trace, "utf16");
  assert.deepEqual(utf16, [[[0, 0, "a😀b"]], [[3, 1, "c"]]]);
  assert.equal(replayOnString("", utf16), "a😀c");
  assert.equal(sequentialIn(trace, "codepoints"), trace.txns);
});

test("a replay plan applies each transaction on exactly its history, then merges all", () => {
  // Agent 0 types, agent 1 forks off twice, the branches merge, and two ends stay open.
  const txns = [
    { parents: [], agent: 0 },
    { parents: [0], agent: 0 },
    { parents: [0], agent: 1 },
    { parents: [1], agent: 0 },
    { parents: [2], agent: 1 },
    { parents: [3, 4], agent: 0 },
    { parents: [3], agent: 2 },
    { parents: [5], agent: 0 },
  ];
  const plan = replayPlan(txns);
  checkPlan(txns, plan);
  // One replica per branch alive at once: the fork at 0 needs a second; later ones reuse them.
  assert.equal(plan.replicas, 2);
});

test("a replay plan refuses histories it cannot compare by agent", () => {
  // Agent 1's second transaction does not see its first.
  const txns = [
    { parents: [], agent: 0 },
    { parents: [0], agent: 1 },
    { parents: [0], agent: 1 },
  ];
  assert.throws(() => replayPlan(txns), /does not follow agent 1's previous one/);
  assert.throws(
    () => replayPlan([{ parents: [], agent: 0 }, { parents: [], agent: 1 }]),
    /second document/,
  );
});

test("the crdt-benchmarks edits leave the text they say, within it at every step", () => {
  for (const which of ["B1.1", "B1.4", "B1.7"] as const) {
    const script = oneUser(which, 500);
    assert.equal(script.patches.length, 500);
    assert.equal(replayOnString("", script.patches.map((p) => [p])), script.text);
  }
  assert.equal(oneUser("B1.1", 50).text.length, 50);
  const start = sharedStart();
  assert.equal(start.length, 100);
  for (const which of ["B2.2", "B2.4"] as const) {
    const patches = twoUsers(which, 200, start, 3);
    let text = start;
    for (const [pos, del, ins] of patches) {
      assert.ok(pos + del <= text.length, `${which}: an edit within the text`);
      text = text.slice(0, pos) + ins + text.slice(pos + del);
    }
    assert.equal(patches.length, which === "B2.2" ? 200 : 400);
    assert.notDeepEqual(patches, twoUsers(which, 200, start, 4), "the two users differ");
  }
});
