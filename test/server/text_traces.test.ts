import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { openOptions } from "../../bench/contenders/cairn.ts";
import { automergeEngine } from "../../bench/contenders/text_automerge.ts";
import { cairnTextEngine } from "../../bench/contenders/text_cairn.ts";
import { replay, runPlan, type TextEngine } from "../../bench/contenders/text_engine.ts";
import { yjsEngine } from "../../bench/contenders/text_yjs.ts";
import { replayPlan } from "../../bench/lib/replay_plan.ts";
import {
  concurrentIn,
  concurrentPrefix,
  type ConcurrentTrace,
  loadTrace,
  replayOnString,
  sequentialIn,
  sequentialPrefix,
  type SequentialTrace,
  TRACES,
} from "../../bench/lib/traces.ts";
import { checkPlan } from "../harness/replay_check.ts";

// Tests run from the project root in Deno and in Node.
const read = async (file: string) => new Uint8Array(await readFile(`bench/data/${file}`));

test("seph-blog1 replayed on a plain string ends with the trace's final text", async () => {
  const trace = await loadTrace(TRACES.sequential, read) as SequentialTrace;
  assert.equal(trace.txns.length, 137_154);
  assert.equal(trace.endContent.length, 56_769);
  assert.equal(replayOnString(trace.startContent, sequentialIn(trace, "utf16")), trace.endContent);
});

async function replayWith(engine: TextEngine, trace: ConcurrentTrace): Promise<string> {
  const plan = replayPlan(trace.txns);
  const replicas = await runPlan(engine, plan, concurrentIn(trace, engine.units));
  const text = replicas[plan.final].text();
  await Promise.all(replicas.map((r) => r.close()));
  return text;
}

test("clownschool's replay plan: each transaction on exactly its history, 6 replicas", async () => {
  const trace = await loadTrace(TRACES.concurrent, read) as ConcurrentTrace;
  assert.equal(trace.txns.length, 23_136);
  // Checking exact histories with sets is quadratic: a prefix of the trace, then the counts
  // docs/benchmarks.md states for the whole trace.
  const prefix = concurrentPrefix(trace, 3_000);
  checkPlan(prefix.txns, replayPlan(prefix.txns));
  const plan = replayPlan(trace.txns);
  assert.equal(plan.replicas, 6);
  assert.equal(plan.syncs, 5_863);
});

test("clownschool replayed by Yjs, a replica per branch, ends with the trace's text", async () => {
  const trace = await loadTrace(TRACES.concurrent, read) as ConcurrentTrace;
  assert.equal(await replayWith(yjsEngine(), trace), trace.endContent);
});

test("Yjs and Automerge merge a prefix of clownschool to the same text", async () => {
  const trace = await loadTrace(TRACES.concurrent, read) as ConcurrentTrace;
  const prefix = concurrentPrefix(trace, 2_000);
  const text = await replayWith(yjsEngine(), prefix);
  assert.ok(text.length > 1_000);
  assert.equal(await replayWith(automergeEngine(), prefix), text);
});

/** Cairn as the text rows run it, in memory. */
function cairn(contender: "cairn" | "cairn-trusted"): TextEngine {
  return cairnTextEngine({
    openOptions: (location) => openOptions(contender, location),
    newLocation: () => undefined,
    fileSizes: () => Promise.resolve({}),
  });
}

test("Cairn, signed and trusted, replays both traces' prefixes to the texts Yjs gets", async () => {
  const sequential = sequentialPrefix(
    await loadTrace(TRACES.sequential, read) as SequentialTrace,
    1_000,
  );
  const concurrent = concurrentPrefix(
    await loadTrace(TRACES.concurrent, read) as ConcurrentTrace,
    600,
  );
  const merged = await replayWith(yjsEngine(), concurrent);
  for (const contender of ["cairn", "cairn-trusted"] as const) {
    const replica = await cairn(contender).create();
    await replay(replica, sequentialIn(sequential, "utf16"));
    assert.equal(replica.text(), sequential.endContent, `${contender}: seph-blog1`);
    await replica.close();
    assert.equal(
      await replayWith(cairn(contender), concurrent),
      merged,
      `${contender}: clownschool`,
    );
  }
});
