import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { type BlockFields, decodeBlock, encodeBlock, sealBlock } from "../../src/core/block.ts";
import { type Commit, commitId, makeCommit } from "../../src/core/commit.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { applyDelta, CommitGraph } from "../../src/repo/commit_graph.ts";
import { ByteArena } from "../../src/repo/byte_arena.ts";
import { HeldBlock } from "../../src/repo/held_blocks.ts";
import { commit } from "../harness/arbitrary.ts";
import { type Author, newAuthor } from "../harness/blocks.ts";

/**
 * A block of 1–6 arbitrary commits by `author` whose seqs follow `firstSeq` with no gap, in body
 * layout 1 or 2; some commits name a parent of the author's own (version 2 writes its seq).
 */
const contiguousBlock = (author: Author): fc.Arbitrary<BlockFields> =>
  fc.record({
    firstSeq: fc.integer({ min: 1, max: 1e6 }),
    commits: fc.array(fc.tuple(commit, fc.boolean()), { minLength: 1, maxLength: 6 }),
    version: fc.constantFrom(1 as const, 2 as const),
  }).map(({ firstSeq, commits, version }) => ({
    session: author.session,
    publicKey: author.key.publicKey,
    seq: 1,
    prev: "",
    commits: commits.map(([c, own], i): Commit => ({
      ...c,
      session: author.session,
      seq: firstSeq + i,
      parents: own ? [...c.parents, `${author.session}.${firstSeq + i - 1 || 7}`] : c.parents,
    })),
    ...(version === 1 ? { version } : {}),
  }));

test("commit graph: addedTo counts the commits of a watched item only, from when it is watched", () => {
  const graph = new CommitGraph();
  const add = (key: string, seq: number) =>
    graph.add(makeCommit("s", seq, key, 1000 + seq, [], "x", "value", {}, []));
  add("a", 1);
  graph.watch("a");
  assert.equal(graph.addedTo("a"), 0);
  add("b", 2);
  add("a", 3);
  add("c", 4);
  assert.equal(graph.addedTo("a"), 1, "commits of other items are not counted");
  assert.equal(graph.addedTo("b"), 0, "an item not watched counts nothing");
  graph.watch("a");
  assert.equal(graph.addedTo("a"), 1, "watched again: the count goes on");
  graph.unwatch("a");
  add("a", 5);
  assert.equal(graph.addedTo("a"), 0);
});

test("commit graph: commits kept as their block's bytes decode to equal commits", async () => {
  const suite = await cryptoSuite();
  const author = await newAuthor(suite);
  await fc.assert(
    fc.asyncProperty(contiguousBlock(author), fc.boolean(), async (fields, viaDecode) => {
      const sealed = await sealBlock(fields, null, suite);
      // A block decoded from bytes knows its offsets too (from the canonical check).
      const block = viaDecode ? await decodeBlock(encodeBlock(sealed), suite) : sealed;
      assert.deepEqual(block.commitOffsets, sealed.commitOffsets);
      const graph = new CommitGraph();
      for (const c of block.block.commits) graph.add(c);
      graph.keepEncoded(block.block, new HeldBlock(block, new ByteArena()));
      for (const c of block.block.commits) {
        const id = commitId(c);
        assert.ok(graph.has(id), id);
        const decoded = graph.get(id)!;
        assert.notEqual(decoded, c, "decoded anew, not the object added");
        assert.deepEqual(decoded, c);
      }
      const after = fields.commits[fields.commits.length - 1].seq + 1;
      assert.equal(graph.has(commitId({ session: author.session, seq: after })), false);
      assert.equal(graph.get(commitId({ session: author.session, seq: after })), undefined);
    }),
    { numRuns: 100, seed: 3 },
  );
});

test("commit graph: a block with a gap in its commit seqs keeps its commit objects", async () => {
  const suite = await cryptoSuite();
  const author = await newAuthor(suite);
  const moreThanOne = contiguousBlock(author).filter((f) => f.commits.length > 1);
  const fields = fc.sample(moreThanOne, { numRuns: 1, seed: 5 })[0];
  const commits = fields.commits.map((c, i) => ({ ...c, seq: c.seq + 2 * i }));
  const sealed = await sealBlock({ ...fields, commits }, null, suite);
  const graph = new CommitGraph();
  for (const c of commits) graph.add(c);
  graph.keepEncoded(sealed.block, new HeldBlock(sealed, new ByteArena()));
  for (const c of commits) assert.equal(graph.get(commitId(c)), c);
});

test("commit graph: a block whose commit offsets are not known keeps its commit objects", async () => {
  const suite = await cryptoSuite();
  const author = await newAuthor(suite);
  for (const commits of [1, 3]) {
    const fields = fc.sample(
      contiguousBlock(author).filter((f) => f.commits.length === commits),
      { numRuns: 1, seed: 11 },
    )[0];
    const { commitOffsets: _, ...withoutOffsets } = await sealBlock(fields, null, suite);
    const held = new HeldBlock(withoutOffsets, new ByteArena());
    assert.equal(held.decodable, false);
    const graph = new CommitGraph();
    for (const c of fields.commits) graph.add(c);
    graph.keepEncoded(withoutOffsets.block, held);
    for (const c of fields.commits) assert.equal(graph.get(commitId(c)), c);
  }
});

/** The value at `at` walked from scratch: what valueAt computes, without anything remembered. */
function walkedValue(commits: Map<string, Commit>, at: Commit): Record<string, unknown> {
  const deltas: Commit[] = [];
  let commit: Commit | undefined = at;
  while (commit?.kind === "delta") {
    deltas.push(commit);
    commit = commits.get(commit.parents[0]);
  }
  let value: Record<string, unknown> = commit?.kind === "value" ? { ...commit.value } : {};
  for (const delta of deltas.reverse()) value = applyDelta(value as never, delta);
  return value;
}

test("commit graph: values at deltas, asked in any order and changed by their callers, stay right", () => {
  // A tree of delta commits on one value, asked for in random order, more of them than the graph
  // remembers; each caller scribbles on the record it got for a delta, which is its own.
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          parent: fc.nat(),
          field: fc.constantFrom("a", "b", "c", "d"),
          value: fc.integer(),
          unset: fc.boolean(),
        }),
        { minLength: 1, maxLength: 150 },
      ),
      fc.array(fc.nat(), { minLength: 1, maxLength: 300 }),
      (steps, asks) => {
        const graph = new CommitGraph();
        const commits = new Map<string, Commit>();
        const add = (c: Commit) => {
          graph.add(c);
          commits.set(commitId(c), c);
        };
        const all: Commit[] = [];
        const root = makeCommit("s", 1, "k", 1, [], "ns/v1", "value", { a: 1, b: 2 });
        add(root);
        all.push(root);
        steps.forEach((step, i) => {
          const parent = all[step.parent % all.length];
          const c = makeCommit(
            "s",
            i + 2,
            "k",
            i + 2,
            [commitId(parent)],
            "ns/v1",
            "delta",
            step.unset ? {} : { [step.field]: step.value },
            step.unset ? [step.field] : [],
          );
          add(c);
          all.push(c);
        });
        for (const ask of asks) {
          const at = all[ask % all.length];
          const got = graph.valueAt(at)!;
          assert.deepEqual(got, walkedValue(commits, at), commitId(at));
          // A delta's value is a record of the caller's own (a value commit's is the commit's).
          if (at.kind === "delta") {
            got.a = "scribbled";
            got.z = "scribbled";
          }
        }
      },
    ),
    { numRuns: 200, seed: 11 },
  );
});
