/**
 * Concurrent writes under two versions of a schema with a text field: the merge brings the
 * common ancestor's value and the older leaf's up to the newer version, though their text field
 * is a list of edits, not a string; the text itself comes from the field's document.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { defineSchema, SchemaRegistry } from "../../src/core/schema.ts";
import type { AnySchema } from "../../src/core/schema_types.ts";
import { copyRecord } from "../../src/core/text/text_record.ts";
import type { Repository } from "../../src/repo/repository.ts";
import { trustedRepositoryOn } from "../harness/repositories.ts";
import { TITLE_AND_BODY } from "../harness/schemas.ts";

const DocV1 = defineSchema(TITLE_AND_BODY);

/** The next version: one field more, the old values kept as they are. */
const DocV2 = defineSchema({
  ns: "doc",
  version: 2,
  from: DocV1,
  fields: {
    title: { type: "string", required: true },
    body: { type: "text" },
    tag: { type: "string" },
  },
});

/** How many times PickyV2's upgrade refused a value. */
let refusals = 0;

/** DocV2 whose upgrade refuses the title "stuck": a merge that needs it fails. */
const PickyV2 = defineSchema({
  ns: "doc",
  version: 2,
  from: DocV1,
  fields: DocV2.fields,
  upgrade: (old) => {
    if (old.title === "stuck") {
      refusals++;
      throw new Error("no upgrade for this one");
    }
    return old;
  },
});

interface Peer {
  readonly repo: Repository;
  readonly registry: SchemaRegistry;
}

/** A trusted in-memory repository with these schemas registered, and its registry. */
function peer(session: string, ...schemas: AnySchema[]): Peer {
  const registry = new SchemaRegistry();
  for (const schema of schemas) registry.register(schema);
  return { repo: trustedRepositoryOn("/docs", session, registry), registry };
}

/** Sends every block `from` holds to `to`; the messages of those `to` refused. */
async function send(from: Peer, to: Peer): Promise<string[]> {
  await from.repo.flush();
  const report = await to.repo.importBlocks(await from.repo.exportBlocks());
  return report.rejected.map(({ error }) => `${error.code}: ${error.message}`);
}

/** Creates `key` under DocV1 and types "hello" into its body. */
function createWithText(at: Peer, key: string): void {
  at.repo.create(key, DocV1.id, DocV1.createWire({ title: key, body: "" }));
  at.repo.editText(key, DocV1.id, "body", { index: 0, deleted: 0, inserted: "hello" });
}

/** Sets the title through DocV1, as a V1 handle does (a delta under V1). */
function setTitleUnderV1(at: Peer, key: string, title: string): void {
  const next = copyRecord(at.repo.value(key)!.wire!);
  next.title = title;
  at.repo.writeChange(key, DocV1.id, next, { title }, []);
}

/** Sets the tag through DocV2, as a V2 handle does: the whole value, upgraded, under DocV2. */
function setTagUnderV2(at: Peer, key: string, tag: string): void {
  const { wire, schema } = at.repo.value(key)!;
  const values = at.registry.get(schema)!.fromWire(wire);
  const upgraded = at.registry.upgrade(values, schema, DocV2);
  at.repo.writeValue(key, DocV2.id, DocV2.createWire({ ...upgraded, tag }));
}

/** The item's value with its texts read, under the schema it follows. */
function read(at: Peer, key: string): { schema: string; value: Record<string, unknown> } {
  const { wire, schema } = at.repo.value(key)!;
  return { schema, value: { ...wire } };
}

const MERGED = { schema: DocV2.id, value: { title: "a1", body: "hello", tag: "b1" } };

test("writes under two schema versions, with edited text, merge alike on both peers", async () => {
  const alice = peer("alice-session-00000000", DocV1, DocV2);
  const bob = peer("bob-session-0000000000", DocV1, DocV2);
  createWithText(alice, "d");
  assert.deepEqual(await send(alice, bob), []);
  setTitleUnderV1(alice, "d", "a1");
  setTagUnderV2(bob, "d", "b1");

  assert.deepEqual(await send(bob, alice), []);
  assert.deepEqual(await send(alice, bob), []);
  assert.deepEqual(read(alice, "d"), MERGED);
  assert.deepEqual(read(bob, "d"), MERGED);
  assert.equal(alice.repo.leaves("d").length, 2, "merged, neither write replaced by the other");
});

test("writes under a version registered later merge when it is registered", async () => {
  const alice = peer("alice-session-00000000", DocV1);
  const bob = peer("bob-session-0000000000", DocV1, DocV2);
  createWithText(alice, "d");
  assert.deepEqual(await send(alice, bob), []);
  setTitleUnderV1(alice, "d", "a1");
  setTagUnderV2(bob, "d", "b1");
  assert.deepEqual(await send(bob, alice), [], "accepted: the item waits for DocV2");

  alice.registry.register(DocV2);
  alice.repo.remergeUnresolved();
  assert.deepEqual(await send(alice, bob), []);
  assert.deepEqual(read(alice, "d"), MERGED);
  assert.deepEqual(read(bob, "d"), MERGED);
});

test("an item whose merge fails waits on, and the other items merge", async () => {
  const alice = peer("alice-session-00000000", DocV1);
  const bob = peer("bob-session-0000000000", DocV1, PickyV2);
  for (const key of ["stuck", "fine"]) createWithText(alice, key);
  assert.deepEqual(await send(alice, bob), []);
  for (const key of ["stuck", "fine"]) {
    alice.repo.editText(key, DocV1.id, "body", { index: 5, deleted: 0, inserted: "!" });
    const value = PickyV2.createWire({ title: key, body: "hello", tag: key });
    bob.repo.writeValue(key, PickyV2.id, value);
  }
  assert.deepEqual(await send(bob, alice), []);
  const stuck = read(alice, "stuck");

  alice.registry.register(PickyV2);
  const changed: string[] = [];
  alice.repo.onChange(({ key }) => changed.push(key));
  alice.repo.remergeUnresolved();
  assert.deepEqual(changed, ["stuck", "fine"]);
  assert.deepEqual(read(alice, "fine"), {
    schema: PickyV2.id,
    value: { title: "fine", body: "hello!", tag: "fine" },
  });
  // Its newest leaf's value stands, now read under a known schema: its text field shows the
  // document, where it held the list of edits while the schema was unknown (a typed read of
  // that failed).
  assert.deepEqual(stuck.value.body, []);
  assert.deepEqual(read(alice, "stuck"), {
    schema: PickyV2.id,
    value: { title: "stuck", body: "hello!", tag: "stuck" },
  });
  // Still waiting, not dropped: merged (and refused) again at the next registration, and not
  // announced again, its value being the same.
  const refused = refusals;
  changed.length = 0;
  alice.repo.remergeUnresolved();
  assert.equal(refusals, refused + 1);
  assert.deepEqual(changed, []);
});

test("a block whose merge fails (an upgrade throws) applies whole, and its session syncs on", async () => {
  const alice = peer("alice-session-00000000", DocV1, PickyV2);
  const bob = peer("bob-session-0000000000", DocV1, PickyV2);
  createWithText(alice, "stuck");
  assert.deepEqual(await send(alice, bob), []);
  // Concurrent: bob writes under PickyV2, alice edits the text under V1; merging them needs
  // PickyV2's upgrade of the title "stuck", which throws.
  bob.repo.writeValue("stuck", PickyV2.id, PickyV2.createWire({ title: "stuck", body: "hello" }));
  alice.repo.editText("stuck", DocV1.id, "body", { index: 5, deleted: 0, inserted: "!" });
  alice.repo.create("later", DocV1.id, DocV1.createWire({ title: "later" }));
  await alice.repo.flush();
  alice.repo.create("latest", DocV1.id, DocV1.createWire({ title: "latest" }));

  assert.deepEqual(await send(alice, bob), [], "no block refused");
  assert.deepEqual(await send(alice, bob), [], "nor refused when sent again");
  assert.equal(bob.repo.leaves("stuck").length, 2, "both writes held");
  assert.deepEqual(read(bob, "later").value, { title: "later" });
  assert.deepEqual(read(bob, "latest").value, { title: "latest" });
  // Alice meets the same failure with bob's write; both show the newest write, as while a
  // schema is missing, and agree.
  assert.deepEqual(await send(bob, alice), []);
  assert.deepEqual(read(alice, "stuck"), read(bob, "stuck"));
  assert.ok(bob.repo.isWhole() && alice.repo.isWhole());
  assert.equal(
    (await bob.repo.exportBlocks()).length,
    (await alice.repo.exportBlocks()).length,
    "each holds every block",
  );
});

/** A set field: the merge of concurrent sets takes arrays. */
const TagsV1 = defineSchema({ ns: "tags", version: 1, fields: { tags: { type: "set" } } });

test("a value imported under a schema unknown then, and wrong for it, waits instead of failing the merge", async () => {
  // Neither knows the schema when the writes meet, so neither value is checked on import.
  const alice = peer("alice-session-00000000");
  const mallory = peer("mallory-session-000000");
  alice.repo.create("t", TagsV1.id, { tags: ["a"] });
  alice.repo.create("u", TagsV1.id, { tags: ["a"] });
  assert.deepEqual(await send(alice, mallory), []);
  alice.repo.writeValue("t", TagsV1.id, { tags: ["a", "b"] });
  alice.repo.writeValue("u", TagsV1.id, { tags: ["a", "b"] });
  mallory.repo.writeValue("t", TagsV1.id, { tags: "not a set" });
  mallory.repo.writeValue("u", TagsV1.id, { tags: ["a", "c"] });
  assert.deepEqual(await send(mallory, alice), [], "accepted: the schema is unknown here");

  alice.registry.register(TagsV1);
  // Before, the set merge took the string's characters as members: [" ", "a", "b", "e", ...].
  alice.repo.remergeUnresolved();
  assert.deepEqual(read(alice, "u").value, { tags: ["a", "b", "c"] }, "the other item merged");
  assert.equal(alice.repo.leaves("t").length, 2, "both writes held; the item waits");
  assert.ok(
    [JSON.stringify(["a", "b"]), JSON.stringify("not a set")]
      .includes(JSON.stringify(read(alice, "t").value.tags)),
    "the newest write's value stands",
  );
  // Mallory, in the same situation, shows the same.
  assert.deepEqual(await send(alice, mallory), []);
  mallory.registry.register(TagsV1);
  mallory.repo.remergeUnresolved();
  assert.deepEqual(read(mallory, "t"), read(alice, "t"));
  assert.deepEqual(read(mallory, "u"), read(alice, "u"));
});
