/**
 * Text fields through the public API: edits by position, commits that carry edits rather than
 * the whole text, change events that say what changed, merges of concurrent edits of any size,
 * and values written before text became edits (whole strings) read and upgraded.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, defineSchema, isCairnError, type ItemChange, type RepositoryHandle } from "cairndb";
import { encodeBlockPayload, sealBlock, sessionIdFromPublicKey } from "../../src/core/block.ts";
import { toBase64Url } from "../../src/core/bytes.ts";
import { type Commit, commitId, makeCommit } from "../../src/core/commit.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { envInteger } from "../harness/peers.ts";
import { seededRandom } from "../harness/random.ts";
import { TITLE_AND_BODY } from "../harness/schemas.ts";
import { replayTextChanges } from "../harness/text_changes.ts";

const Doc = defineSchema(TITLE_AND_BODY);

async function peers(count: number): Promise<{ dbs: Cairn[]; repos: RepositoryHandle[] }> {
  const dbs: Cairn[] = [];
  for (let i = 0; i < count; i++) dbs.push(await Cairn.open({ schemas: [Doc] }));
  for (const db of dbs) {
    for (const other of dbs) if (other !== db) await db.trust(other.session.publicKey);
  }
  return { dbs, repos: await Promise.all(dbs.map((db) => db.open("/docs"))) };
}

/**
 * A block by a new session every one of `dbs` trusts: commits of item "d" given as [parents, text
 * operations], a parent "first" being the block's first commit.
 */
async function trustedBlock(
  dbs: readonly Cairn[],
  ...commits: [string[], unknown[]][]
): Promise<{ session: string; frame: Uint8Array }> {
  const suite = await cryptoSuite();
  const author = await suite.ed25519.generate();
  const session = await sessionIdFromPublicKey(author.publicKey, suite);
  for (const db of dbs) await db.trust(toBase64Url(author.publicKey));
  const made: Commit[] = [];
  for (const [parents, ops] of commits) {
    const named = parents.map((parent) => parent === "first" ? commitId(made[0]) : parent);
    const hlc = Date.now() * 1024 + 5000 + made.length;
    made.push(makeCommit(session, made.length + 1, "d", hlc, named, Doc.id, "delta", {
      body: ops as never,
    }, []));
  }
  const sealed = await sealBlock(
    { session, publicKey: author.publicKey, seq: 1, prev: "", commits: made },
    { key: author, ed25519: suite.ed25519 },
    suite,
  );
  return { session, frame: encodeBlockPayload(sealed.body, sealed.block.signature) };
}

async function exchange(from: RepositoryHandle, to: RepositoryHandle): Promise<void> {
  const report = await to.importBlocks(await from.exportBlocks(to.versionVector()));
  assert.deepEqual(report.rejected.map((r) => r.error.message), []);
}

test("insertText, deleteText and replaceText edit by position; events say what changed", async () => {
  const { repos: [repo] } = await peers(1);
  const doc = repo.create(Doc, { title: "t", body: "hello world" }, { key: "d" });
  const events: ItemChange[] = [];
  doc.on("change", (change) => events.push(change));
  doc.insertText("body", 5, ",");
  doc.deleteText("body", 6, 6);
  doc.replaceText("body", 0, 5, "Howdy");
  doc.insertText("body", 6, " folks");
  assert.equal(doc.get("body"), "Howdy, folks");
  assert.deepEqual(events.map((e) => e.text), [
    [{ field: "body", changes: [{ index: 5, deleted: 0, inserted: "," }] }],
    [{ field: "body", changes: [{ index: 6, deleted: 6, inserted: "" }] }],
    [{ field: "body", changes: [{ index: 0, deleted: 5, inserted: "Howdy" }] }],
    [{ field: "body", changes: [{ index: 6, deleted: 0, inserted: " folks" }] }],
  ]);
  // set() of a whole string is the smallest edit from the current text.
  events.length = 0;
  doc.set("body", "Howdy, all folks");
  assert.deepEqual(events[0].text, [
    { field: "body", changes: [{ index: 6, deleted: 0, inserted: " all" }] },
  ]);
});

test("bad text edits are typed errors and change nothing", async () => {
  const { repos: [repo] } = await peers(1);
  const doc = repo.create(Doc, { title: "t", body: "a😀b" }, { key: "d" });
  const code = (c: string) => (err: unknown) => isCairnError(err, c as never);
  assert.throws(() => doc.insertText("body", 99, "x"), code("E_BAD_ARGUMENT"));
  assert.throws(() => doc.insertText("body", -1, "x"), code("E_BAD_ARGUMENT"));
  assert.throws(() => doc.insertText("body", 1.5, "x"), code("E_BAD_ARGUMENT"));
  assert.throws(() => doc.insertText("body", 2, "x"), code("E_BAD_ARGUMENT"), "inside 😀");
  assert.throws(() => doc.deleteText("body", 0, 2), code("E_BAD_ARGUMENT"), "half of 😀");
  assert.throws(() => doc.deleteText("body", 0, 9), code("E_BAD_ARGUMENT"));
  assert.throws(() => doc.insertText("title" as "body", 0, "x"), code("E_WRONG_TYPE"));
  assert.throws(() => doc.insertText("nope" as "body", 0, "x"), code("E_UNKNOWN_FIELD"));
  assert.throws(() => doc.insertText("body", 0, 5 as unknown as string), code("E_WRONG_TYPE"));
  assert.equal(doc.get("body"), "a😀b");
  doc.insertText("body", 3, "!");
  assert.equal(doc.get("body"), "a😀!b");
});

test("a one-character edit of a long text commits the edit, not the text", async () => {
  const { repos: [a, b] } = await peers(2);
  const doc = a.create(Doc, { title: "t", body: "x".repeat(20_000) }, { key: "d" });
  await exchange(a, b);
  const before = a.versionVector();
  doc.insertText("body", 10_000, "!");
  const [frame] = await a.exportBlocks(before);
  assert.ok(frame.length < 300, `one block of ${frame.length} bytes`);
  const events: ItemChange[] = [];
  b.on("change", (change) => events.push(change));
  await exchange(a, b);
  assert.equal(b.get("d", Doc)?.get("body"), doc.get("body"));
  assert.deepEqual(events[0].text, [
    { field: "body", changes: [{ index: 10_000, deleted: 0, inserted: "!" }] },
  ]);
});

test("two peers each inserting 2,000 characters into a 100-character text: 4,100 characters, each once", async () => {
  const { repos: [a, b] } = await peers(2);
  const base = "0123456789".repeat(10);
  a.create(Doc, { title: "t", body: base }, { key: "d" });
  await exchange(a, b);
  const mine = "A".repeat(1000) + "B".repeat(1000);
  const theirs = "C".repeat(1000) + "D".repeat(1000);
  a.get("d", Doc)!.insertText("body", 50, mine);
  b.get("d", Doc)!.insertText("body", 50, theirs);
  await exchange(a, b);
  await exchange(b, a);
  const text = a.get("d", Doc)!.get("body")!;
  assert.equal(text, b.get("d", Doc)!.get("body"));
  assert.equal(text.length, 4100);
  assert.equal(text.slice(0, 50) + text.slice(4050), base, "the base text once, around them");
  assert.ok(text.includes(mine) && text.includes(theirs), "each insert whole, not interleaved");
});

test("an unset text field starts empty again when edited", async () => {
  const { repos: [repo] } = await peers(1);
  const doc = repo.create(Doc, { title: "t", body: "old" }, { key: "d" });
  doc.set("body", undefined);
  assert.equal(doc.get("body"), undefined);
  doc.insertText("body", 0, "new");
  assert.equal(doc.get("body"), "new");
});

/** Item "d" on every peer, its body `body` as an older Cairn wrote it: a whole string. */
async function legacyItem(dbs: Cairn[], repos: RepositoryHandle[], body: string): Promise<void> {
  const suite = await cryptoSuite();
  const author = await suite.ed25519.generate();
  const session = await sessionIdFromPublicKey(author.publicKey, suite);
  const legacy = makeCommit(session, 1, "d", 1, [], Doc.id, "value", { title: "t", body });
  const sealed = await sealBlock(
    { session, publicKey: author.publicKey, seq: 1, prev: "", commits: [legacy] },
    { key: author, ed25519: suite.ed25519 },
    suite,
  );
  for (const [i, repo] of repos.entries()) {
    await dbs[i].trust(
      btoa(String.fromCharCode(...author.publicKey)).replace(/\+/g, "-")
        .replace(/\//g, "_").replace(/=+$/, ""),
    );
    const report = await repo.importBlocks([
      encodeBlockPayload(sealed.body, sealed.block.signature),
    ]);
    assert.deepEqual(report.rejected, []);
    assert.equal(repo.get("d", Doc)?.get("body"), body);
  }
}

test("a whole-string text value from before text edits is read, and its first edit upgrades it on every peer", async () => {
  const { dbs, repos: [a, b] } = await peers(2);
  await legacyItem(dbs, [a, b], "legacy text");
  a.get("d", Doc)!.insertText("body", 6, " (upgraded)");
  b.get("d", Doc)!.set("title", "edited concurrently");
  await exchange(a, b);
  await exchange(b, a);
  for (const repo of [a, b]) {
    assert.deepEqual(repo.get("d", Doc)?.toObject(), {
      title: "edited concurrently",
      body: "legacy (upgraded) text",
    });
  }
  // Later edits on either side are ordinary edits of the upgraded text.
  b.get("d", Doc)!.insertText("body", 0, "A ");
  a.get("d", Doc)!.deleteText("body", 0, 6);
  await exchange(a, b);
  await exchange(b, a);
  assert.equal(a.get("d", Doc)?.get("body"), "A  (upgraded) text");
  assert.equal(b.get("d", Doc)?.get("body"), "A  (upgraded) text");
});

const SCHEDULES = envInteger("CAIRN_TEXT_FUZZ") ?? 100;
const SEED = envInteger("CAIRN_TEXT_FUZZ_SEED") ?? 20261125;

test(`a whole-string value first edited on several peers at once is kept once, with every edit (seed ${SEED})`, async () => {
  const base = "abcdefghijklmnopqrst"; // distinct characters: a copy would show
  for (let schedule = 0; schedule < 30; schedule++) {
    const seed = SEED + schedule;
    const random = seededRandom(seed);
    const { dbs, repos } = await peers(2 + Math.floor(random() * 3));
    await legacyItem(dbs, repos, base);
    const deleted = new Set<string>();
    for (let step = 0; step < 4 * repos.length; step++) {
      const i = Math.floor(random() * repos.length);
      const doc = repos[i].get("d", Doc)!;
      const body = doc.get("body")!;
      const at = Math.floor(random() * (body.length + 1));
      const pick = random();
      if (pick < 0.15) {
        // Some peers see others' first edits before making their own.
        await exchange(repos[Math.floor(random() * repos.length)], repos[i]);
      } else if (pick < 0.45 && at < body.length) {
        const count = Math.min(body.length - at, 1 + Math.floor(random() * 3));
        for (const char of body.slice(at, at + count)) deleted.add(char);
        doc.deleteText("body", at, count);
      } else if (pick < 0.6) {
        doc.set("body", body.slice(0, at) + String.fromCharCode(65 + i) + body.slice(at));
      } else doc.insertText("body", at, String.fromCharCode(65 + i).repeat(1 + (step % 3)));
    }
    for (let round = 0; round < 2; round++) {
      for (const from of repos) for (const to of repos) if (from !== to) await exchange(from, to);
    }
    const texts = repos.map((repo) => repo.get("d", Doc)!.get("body")!);
    assert.ok(texts.every((text) => text === texts[0]), `seed ${seed}: converged: ${texts}`);
    const kept = [...base].filter((char) => !deleted.has(char)).join("");
    assert.equal(texts[0].replace(/[A-Z]/g, ""), kept, `seed ${seed}: the old text once`);
    for (const db of dbs) await db.close();
  }
});

test(`text through the engine: ${SCHEDULES} schedules of 2–5 peers editing and syncing converge (seed ${SEED})`, async () => {
  for (let schedule = 0; schedule < SCHEDULES; schedule++) {
    const seed = SEED + schedule;
    const random = seededRandom(seed);
    const { dbs, repos } = await peers(2 + Math.floor(random() * 4));
    repos[0].create(Doc, { title: "t", body: "" }, { key: "d" });
    const steps = 10 + Math.floor(random() * 30);
    for (let step = 0; step < steps; step++) {
      const i = Math.floor(random() * repos.length);
      const repo = repos[i];
      const doc = repo.get("d", Doc);
      if (!doc || random() < 0.3) {
        await exchange(repos[Math.floor(random() * repos.length)], repo);
        continue;
      }
      const body = doc.get("body") ?? "";
      const letter = String.fromCharCode(65 + i);
      const at = Math.floor(random() * (body.length + 1));
      if (random() < 0.1) {
        doc.set("body", letter.repeat(1 + Math.floor(random() * 50))); // replace everything
      } else if (random() < 0.3 && body.length > 0) {
        doc.deleteText("body", Math.min(at, body.length - 1), 1);
      } else {
        doc.insertText(
          "body",
          at,
          letter.repeat(1 + Math.floor(random() * (random() < 0.1 ? 500 : 3))),
        );
      }
    }
    for (let round = 0; round < 2; round++) {
      for (const from of repos) for (const to of repos) if (from !== to) await exchange(from, to);
    }
    const texts = repos.map((repo) => repo.get("d", Doc)!.get("body"));
    assert.ok(texts.every((text) => text === texts[0]), `seed ${seed}: converged`);
    for (const db of dbs) await db.close();
  }
});

test("a trusted peer's block with text edits that cannot apply is refused whole; nothing of it applies", async () => {
  const { dbs, repos: [a] } = await peers(1);
  const doc = a.create(Doc, { title: "t", body: "abc" }, { key: "d" });
  await a.flush();
  const suite = await cryptoSuite();
  const author = await suite.ed25519.generate();
  const session = await sessionIdFromPublicKey(author.publicKey, suite);
  await dbs[0].trust(toBase64Url(author.publicKey));
  const [leaf] = a.leaves("d");
  const hostile = [
    [[1, "x", ["nobody", 5], null]], // names a character the document lacks
    [[["nobody", 1], 2]], // deletes characters the document lacks
    [[1, "", null, null]], // not an edit
  ];
  for (const body of hostile) {
    const edit = makeCommit(session, 1, "d", 2 ** 40, [leaf], Doc.id, "delta", {
      body: body as never,
    }, []);
    // A second commit in the same block, valid on its own: it must not apply either.
    const other = makeCommit(session, 2, "e", 2 ** 40, [], Doc.id, "value", {
      title: "should not exist",
    });
    const sealed = await sealBlock(
      { session, publicKey: author.publicKey, seq: 1, prev: "", commits: [edit, other] },
      { key: author, ed25519: suite.ed25519 },
      suite,
    );
    const report = await a.importBlocks([encodeBlockPayload(sealed.body, sealed.block.signature)]);
    assert.equal(report.rejected.length, 1, JSON.stringify(body));
    assert.ok(
      ["E_BAD_COMMIT", "E_CORRUPT_ENCODING"].includes(report.rejected[0].error.code),
      report.rejected[0].error.message,
    );
    assert.equal(doc.get("body"), "abc");
    assert.equal(a.has("e"), false);
  }
});

test("a trusted peer's edit that splits a surrogate pair, or whose origins are out of order, is refused on every peer", async () => {
  const { dbs, repos: [a, b] } = await peers(2);
  a.create(Doc, { title: "t", body: "a😀bc" }, { key: "d" });
  await exchange(a, b);
  const [base] = a.leaves("d");
  // A concurrent honest edit on one peer only, before the hostile blocks arrive.
  b.get("d", Doc)!.insertText("body", 4, "X");
  const suite = await cryptoSuite();
  const author = await suite.ed25519.generate();
  const session = await sessionIdFromPublicKey(author.publicKey, suite);
  for (const db of dbs) await db.trust(toBase64Url(author.publicKey));
  const me = dbs[0].session.id; // a: 1, the pair: 2 and 3, b: 4, c: 5
  const hostile = [
    [[[me, 3], 1]], // the pair's low half alone
    [[[me, 1], 2]], // a and the pair's high half
    [[1, "!", [me, 2], [me, 3]]], // between the halves
    [[1, "!", [me, 5], [me, 4]]], // right origin before the left one
    [[1, "!", [me, 4], [me, 4]]], // one character as both origins
    [[1, "!", [me, 4], [me, 5]], [2, "?", 1, [me, 4]]], // the same, on its own insert
  ];
  const reasons = [
    ...Array(2).fill("a delete splits a surrogate pair"),
    "an insert splits a surrogate pair",
    ...Array(3).fill("an insert's right origin does not stand after its left origin"),
  ];
  for (const [i, body] of hostile.entries()) {
    // Stamped after its parent, and not ahead of the peers' clocks.
    const edit = makeCommit(session, 1, "d", Date.now() * 1024 + 5000, [base], Doc.id, "delta", {
      body: body as never,
    }, []);
    const sealed = await sealBlock(
      { session, publicKey: author.publicKey, seq: 1, prev: "", commits: [edit] },
      { key: author, ed25519: suite.ed25519 },
      suite,
    );
    for (const [repo, text] of [[a, "a😀bc"], [b, "a😀bXc"]] as const) {
      const report = await repo.importBlocks([
        encodeBlockPayload(sealed.body, sealed.block.signature),
      ]);
      assert.deepEqual(report.rejected.map((r) => r.error.message), [
        `E_BAD_COMMIT: text edit refused: ${reasons[i]}`,
      ], `edit ${i}`);
      assert.equal(repo.get("d", Doc)?.get("body"), text, `edit ${i}`);
    }
  }
  await exchange(b, a);
  assert.equal(a.get("d", Doc)?.get("body"), "a😀bXc");
});

test("a trusted peer's insert whose origins skip text its author had is refused on every peer; one between concurrent text only is accepted", async () => {
  const { dbs, repos: [a, b] } = await peers(2);
  a.create(Doc, { title: "t", body: "abc" }, { key: "d" });
  await exchange(a, b);
  const [base] = a.leaves("d");
  // Concurrent with the blocks below (made on `base`): on b only, for now.
  b.get("d", Doc)!.insertText("body", 2, "X");
  const [bLeaf] = b.leaves("d");
  const me = dbs[0].session.id; // a, b, c: 1, 2, 3
  const them = dbs[1].session.id; // X: 1
  const block = (...commits: [string[], unknown[]][]) => trustedBlock(dbs, ...commits);
  const refused = "E_BAD_COMMIT: text edit refused: an insert's origins were not neighbours: " +
    "its author had seen text between them";
  const tryOn = async (repo: RepositoryHandle, frame: Uint8Array) =>
    (await repo.importBlocks([frame])).rejected.map((r) => r.error.message);

  // Between a and c, skipping the b it had: refused by a (nothing else between) and by b (X too).
  const skips = await block([[base], [[1, "!", [me, 1], [me, 3]]]]);
  for (const repo of [a, b]) assert.deepEqual(await tryOn(repo, skips.frame), [refused]);
  // Two commits of one block, the second following the first: it may not skip the first's "1".
  const first = [[base], [[1, "1", [me, 1], [me, 2]]]] as [string[], unknown[]];
  const skipsOwn = await block(first, [["first"], [[2, "2", [me, 1], [me, 2]]]]);
  for (const repo of [a, b]) assert.deepEqual(await tryOn(repo, skipsOwn.frame), [refused]);
  // Between "1" and b; or skipping "1" from a commit that did not follow the first.
  const afterOwn = await block(first, [["first"], [[2, "2", 1, [me, 2]]]]);
  const concurrentOwn = await block(first, [[base], [[2, "2", [me, 1], [me, 2]]]]);
  for (const repo of [a, b]) {
    assert.deepEqual(await tryOn(repo, afterOwn.frame), []);
    assert.deepEqual(await tryOn(repo, concurrentOwn.frame), []);
  }
  // Neighbours for its author (b and c), with b's X between them on b only: accepted by both.
  const between = await block([[base], [[1, "!", [me, 2], [me, 3]]]]);
  for (const repo of [a, b]) {
    assert.deepEqual(await tryOn(repo, between.frame), []);
  }
  assert.equal(a.get("d", Doc)!.get("body"), "a1212b!c");
  await exchange(b, a);
  await exchange(a, b);
  assert.equal(a.get("d", Doc)!.get("body"), b.get("d", Doc)!.get("body"));
  assert.equal(a.get("d", Doc)!.get("body")?.replace("X", ""), "a1212b!c");
  // Made after b's X (its parent is b's commit), skipping it: refused by both, now both hold X.
  const skipsSeen = await block([[bLeaf], [[1, "?", [me, 2], [me, 3]]]]);
  // Made after b's X, between X and c: accepted by both.
  const afterSeen = await block([[bLeaf], [[1, "?", [them, 1], [me, 3]]]]);
  for (const repo of [a, b]) {
    assert.deepEqual(await tryOn(repo, skipsSeen.frame), [refused]);
    assert.deepEqual(await tryOn(repo, afterSeen.frame), []);
  }
  assert.equal(a.get("d", Doc)!.get("body"), b.get("d", Doc)!.get("body"));
  for (const db of dbs) await db.close();
});

test("a trusted peer's insert whose origins are characters its author had not seen is refused on every peer, whatever order the blocks arrive in", async () => {
  const { dbs, repos: [a, b] } = await peers(2);
  a.create(Doc, { title: "t", body: "ab" }, { key: "d" });
  await exchange(a, b);
  const [base] = a.leaves("d");
  const me = dbs[0].session.id; // a, b: 1, 2
  const typed = await trustedBlock(dbs, [[base], [[1, "QQQQ", [me, 1], [me, 2]]]]);
  const q = (clock: number) => [typed.session, clock];
  // Both made on `base` alone, so QQQQ was concurrent to them, yet both name its characters,
  // with some of them between: accepted, they came out in an order that depended on arrival.
  const x = await trustedBlock(dbs, [[base], [[1, "yz", q(1), q(3)]]]);
  const y = await trustedBlock(dbs, [[base], [[1, "w", q(2), q(4)]]]);
  const refused = "E_BAD_COMMIT: text edit refused: an insert's origin is a character its " +
    "author had not seen";
  for (const [repo, order] of [[a, [x, y]], [b, [y, x]]] as const) {
    assert.deepEqual((await repo.importBlocks([typed.frame])).rejected, []);
    for (const { frame } of order) {
      const report = await repo.importBlocks([frame]);
      assert.deepEqual(report.rejected.map((r) => r.error.message), [refused]);
    }
    assert.equal(repo.get("d", Doc)!.get("body"), "aQQQQb");
  }
  for (const db of dbs) await db.close();
});

test("a trusted peer's delete of characters its author had not seen is refused on every peer, whatever order the blocks arrive in", async () => {
  const { dbs, repos: [a, b] } = await peers(2);
  a.create(Doc, { title: "t", body: "ab" }, { key: "d" });
  await exchange(a, b);
  const [base] = a.leaves("d");
  const me = dbs[0].session.id; // a, b: 1, 2
  const typed = await trustedBlock(dbs, [[base], [[1, "XYZ", [me, 1], [me, 2]]]]);
  // Made on `base` alone, so XYZ was concurrent to it, yet it deletes the Y. A peer without XYZ
  // refuses it (a character it lacks); one holding XYZ applied it, until 2026-11-29: the text
  // then depended on the order the blocks came in ("aXZb" against "aXYZb").
  const blind = await trustedBlock(dbs, [[base], [[[typed.session, 2], 1]]]);
  const withoutIt = "E_BAD_COMMIT: text edit refused: a delete names a character it lacks";
  const refused = "E_BAD_COMMIT: text edit refused: a delete names a character its author had " +
    "not seen";
  const rejected = async (repo: RepositoryHandle, frame: Uint8Array) =>
    (await repo.importBlocks([frame])).rejected.map((r) => r.error.message);
  assert.deepEqual(await rejected(a, typed.frame), []);
  assert.deepEqual(await rejected(a, blind.frame), [refused]);
  assert.deepEqual(await rejected(b, blind.frame), [withoutIt]);
  assert.deepEqual(await rejected(b, typed.frame), []);
  assert.deepEqual(await rejected(b, blind.frame), [refused], "refused once XYZ is there too");
  for (const repo of [a, b]) assert.equal(repo.get("d", Doc)!.get("body"), "aXYZb");
  // A delete of what its author had seen (its parent holds XYZ) applies on both.
  const [withXyz] = a.leaves("d");
  const seen = await trustedBlock(dbs, [[withXyz], [[[typed.session, 2], 1]]]);
  for (const repo of [a, b]) {
    assert.deepEqual(await rejected(repo, seen.frame), []);
    assert.equal(repo.get("d", Doc)!.get("body"), "aXZb");
  }
  for (const db of dbs) await db.close();
});

test(`a peer's block of hundreds of edits of one text, beside concurrent edits here, applies with events that replay to its text (seed ${SEED})`, async () => {
  for (let round = 0; round < 10; round++) {
    const seed = SEED + round;
    const random = seededRandom(seed);
    const { dbs, repos: [a, b] } = await peers(2);
    a.create(Doc, { title: "t", body: "0123456789".repeat(10) }, { key: "d" });
    await exchange(a, b);
    // One tick of a's: hundreds of edits at random places, sealed as one block.
    const mine = a.get("d", Doc)!;
    for (let i = 0; i < 300; i++) {
      const length = mine.get("body")!.length;
      if (random() < 0.3 && length > 0) mine.deleteText("body", Math.floor(random() * length), 1);
      else mine.insertText("body", Math.floor(random() * (length + 1)), "abc"[i % 3]);
    }
    // Concurrent edits on b, then b takes a's block in and follows its events.
    const theirs = b.get("d", Doc)!;
    for (let i = 0; i < 20; i++) {
      theirs.insertText("body", Math.floor(random() * theirs.get("body")!.length), "XY"[i % 2]);
    }
    let followed = theirs.get("body")!;
    theirs.on("change", (change) => followed = replayTextChanges(followed, change));
    const imported = await b.importBlocks(await a.exportBlocks(b.versionVector()));
    assert.equal(imported.rejected.length, 0, `seed ${seed}`);
    assert.equal(followed, theirs.get("body"), `seed ${seed}: the events replay to the text`);
    await exchange(b, a);
    assert.equal(mine.get("body"), theirs.get("body"), `seed ${seed}: converged`);
    for (const db of dbs) await db.close();
  }
});
