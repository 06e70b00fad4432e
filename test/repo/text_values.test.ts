import { test } from "node:test";
import assert from "node:assert/strict";
import type { FieldRecord } from "../../src/core/commit.ts";
import { defineSchema } from "../../src/core/schema.ts";
import { readsLazily } from "../../src/core/text/text_record.ts";
import type { Repository } from "../../src/repo/repository.ts";
import { TITLE_AND_BODY } from "../harness/schemas.ts";
import { seededRandom } from "../harness/random.ts";
import { trustedRepository } from "../harness/repositories.ts";

const Doc = defineSchema(TITLE_AND_BODY);

function repository(session: string): Repository {
  return trustedRepository("/docs", session, Doc);
}

/**
 * 300 seeded edits of item "d" in `repo`, each sealed into a block of its own: each state's value
 * and the text it should read.
 */
async function edit(repo: Repository): Promise<[FieldRecord, string][]> {
  const random = seededRandom(17);
  let model = "a".repeat(5000);
  repo.create("d", Doc.id, Doc.createWire({ title: "t", body: model }));
  const states: [FieldRecord, string][] = [];
  for (let i = 0; i < 300; i++) {
    const index = Math.floor(random() * (model.length + 1));
    const deleted = Math.min(model.length - index, Math.floor(random() * 3));
    const inserted = String.fromCharCode(97 + i % 26);
    repo.editText("d", Doc.id, "body", { index, deleted, inserted });
    model = model.slice(0, index) + inserted + model.slice(index + deleted);
    states.push([repo.value("d")!.wire!, model]);
    await repo.flush();
  }
  return states;
}

test("a local text edit does not read the text, and every earlier state keeps reading its own", async () => {
  const states = await edit(repository("local-edits-session-00"));
  assert.ok(
    states.every(([wire]) => readsLazily(wire, "body")),
    "no edit read a state's text (each holds it unread)",
  );
  for (const [i, [wire, text]] of states.entries()) assert.equal(wire.body, text, `state ${i}`);
  assert.equal(states[0][0].title, "t");
});

test("an imported text edit does not read the text, and every state keeps reading its own", async () => {
  const writer = repository("text-writer-session-00");
  const written = await edit(writer);
  const frames = await writer.exportBlocks();
  const reader = repository("text-reader-session-00");
  const states: FieldRecord[] = [];
  // One block at a time, as peers receive a typist's edits.
  for (const frame of frames) {
    const report = await reader.importBlocks([frame]);
    assert.equal(report.rejected.length, 0);
    states.push(reader.value("d")!.wire!);
  }
  assert.ok(states.every((wire) => readsLazily(wire, "body")), "held unread");
  // The creation shares the first edit's tick, hence its block.
  assert.equal(frames.length, 300, "each edit in a block of its own");
  for (const [i, wire] of states.entries()) assert.equal(wire.body, written[i][1], `state ${i}`);
});
