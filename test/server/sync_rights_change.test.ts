/**
 * Rights that change while clients are connected: a revoked reader stops receiving at once and
 * is told `denied`; a reader granted later is sent `reset`; a write grant or revocation reaches
 * the subscriber as `members` or `denied` and decides its next pushes; `server.reauthorize()`
 * does the same for an `authorize` hook whose answers changed. The sync client follows: queued
 * blocks go out when writing is granted.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { defineSchema } from "../../src/core/schema.ts";
import { Cairn } from "../../src/db/database.ts";
import { sync } from "../../src/sync/client.ts";
import { blocksOf, keyOf, newSession, pushBlocks, RawClient } from "../harness/sync_client.ts";
import { withSyncServer } from "../harness/sync_server.ts";
import { waitFor } from "../harness/wait.ts";
import { OPTIONAL_TITLE } from "../harness/schemas.ts";

const REPO = "/data/shared";

/** Waits until every frame the server sent `client` before now has arrived (ping, pong). */
async function roundTrip(client: RawClient): Promise<void> {
  const n = Math.floor(Math.random() * 1e9);
  client.send({ type: "ping", n });
  while ((await client.next("pong")).n !== n) { /* an earlier pong */ }
}

test("sync rights: a reader whose read right is revoked is denied at once and sent nothing more", async () => {
  await withSyncServer({}, async (server) => {
    const [owner, reader] = [await newSession(), await newSession()];
    const ownerClient = await RawClient.connect(server.url, owner);
    await pushBlocks(ownerClient, REPO, await blocksOf(owner, REPO, 1));
    await server.access.grant(REPO, keyOf(reader), "read");
    const readerClient = await RawClient.connect(server.url, reader);
    assert.equal((await readerClient.catchUp(REPO)).blocks.length, 1);

    await pushBlocks(ownerClient, REPO, await blocksOf(owner, REPO, 1, 1));
    assert.equal((await readerClient.next("live")).frames.length, 1);

    await server.access.revoke(REPO, keyOf(reader));
    const denied = await readerClient.next("denied");
    assert.deepEqual([denied.repo, denied.right, denied.code], [REPO, "read", "E_FORBIDDEN"]);
    await pushBlocks(ownerClient, REPO, await blocksOf(owner, REPO, 1, 2));
    await roundTrip(readerClient);
    assert.deepEqual(readerClient.pending("live"), [], "a revoked reader got a live frame");

    // Granted again: told to subscribe again, and a new subscription catches up on what it missed.
    await server.access.grant(REPO, keyOf(reader), "read");
    assert.equal((await readerClient.next("reset")).repo, REPO);
    assert.equal((await readerClient.catchUp(REPO)).blocks.length, 3);
    await Promise.all([ownerClient.close(), readerClient.close()]);
  });
});

test("sync rights: public read turned off reaches subscribers that relied on it, not members", async () => {
  await withSyncServer({}, async (server) => {
    const [owner, member, stranger] = [await newSession(), await newSession(), await newSession()];
    const ownerClient = await RawClient.connect(server.url, owner);
    await pushBlocks(ownerClient, REPO, await blocksOf(owner, REPO, 1));
    await server.access.setPublicRead(REPO, true);
    await server.access.grant(REPO, keyOf(member), "read");
    const memberClient = await RawClient.connect(server.url, member);
    const strangerClient = await RawClient.connect(server.url, stranger);
    await memberClient.catchUp(REPO);
    await strangerClient.catchUp(REPO);

    await server.access.setPublicRead(REPO, false);
    assert.equal((await strangerClient.next("denied")).right, "read");
    await pushBlocks(ownerClient, REPO, await blocksOf(owner, REPO, 1, 1));
    assert.equal((await memberClient.next("live")).frames.length, 1);
    await roundTrip(memberClient);
    assert.deepEqual(memberClient.pending("denied"), []);
    await Promise.all([ownerClient.close(), memberClient.close(), strangerClient.close()]);
  });
});

test("sync rights: a write grant and a revocation reach the subscriber and decide its next pushes", async () => {
  await withSyncServer({}, async (server) => {
    const [owner, member] = [await newSession(), await newSession()];
    const ownerClient = await RawClient.connect(server.url, owner);
    await pushBlocks(ownerClient, REPO, await blocksOf(owner, REPO, 1));
    await server.access.grant(REPO, keyOf(member), "read");
    const client = await RawClient.connect(server.url, member);
    assert.equal((await client.catchUp(REPO)).members.canWrite, false);
    const [refused] = await pushBlocks(client, REPO, await blocksOf(member, REPO, 1));
    assert.equal(refused.rejected[0]?.code, "E_FORBIDDEN");

    await server.access.grant(REPO, keyOf(member), "write");
    const granted = await client.next("members");
    assert.deepEqual([granted.canWrite, granted.writers.length], [true, 0]);
    const mine = await (await member.db.open(REPO)).exportBlocks();
    const [applied] = await pushBlocks(client, REPO, mine);
    assert.equal(applied.applied, 1, "the block refused before the grant is taken after it");

    await server.access.grant(REPO, keyOf(member), "read");
    const denied = await client.next("denied");
    assert.deepEqual([denied.right, denied.code], ["write", "E_FORBIDDEN"]);
    const [after] = await pushBlocks(client, REPO, await blocksOf(member, REPO, 1, 1));
    assert.deepEqual([after.applied, after.rejected[0]?.code], [0, "E_FORBIDDEN"]);
    // Still a reader.
    await pushBlocks(ownerClient, REPO, await blocksOf(owner, REPO, 1, 1));
    assert.equal((await client.next("live")).frames.length, 1);
    await Promise.all([ownerClient.close(), client.close()]);
  });
});

test("sync rights: server.reauthorize() asks an authorize hook again for connected clients", async () => {
  const allowed = new Set(["reader", "writer"]);
  await withSyncServer({
    authorize: ({ token }) => token !== null && allowed.has(token),
  }, async (server) => {
    const writer = await RawClient.connect(server.url, undefined, "writer");
    const reader = await RawClient.connect(server.url, undefined, "reader");
    await writer.catchUp(REPO);
    await reader.catchUp(REPO);
    await pushBlocks(writer, REPO, await blocksOf(writer.session, REPO, 1));
    assert.equal((await reader.next("live")).frames.length, 1);

    allowed.delete("reader");
    server.reauthorize("/data/other"); // another repository: nothing changes here
    await roundTrip(reader);
    assert.deepEqual(reader.pending("denied"), []);
    server.reauthorize(REPO);
    assert.equal((await reader.next("denied")).right, "read");
    await pushBlocks(writer, REPO, await blocksOf(writer.session, REPO, 1, 1));
    await roundTrip(reader);
    assert.deepEqual(reader.pending("live"), []);

    allowed.add("reader");
    server.reauthorize();
    assert.equal((await reader.next("reset")).repo, REPO);
    assert.throws(() => server.reauthorize("no path"), { code: "E_BAD_PATH" });
    await Promise.all([writer.close(), reader.close()]);
  });
});

const Note = defineSchema(OPTIONAL_TITLE);

test("sync rights: the client pushes what waited once writing is granted, and stops receiving once reading is revoked", async () => {
  await withSyncServer({}, async (server) => {
    const owner = await Cairn.open({ schemas: [Note] });
    const member = await Cairn.open({ schemas: [Note] });
    const ownerNotes = await owner.open(REPO);
    ownerNotes.create(Note, { title: "the owner's" });
    const ownerLink = sync(owner, server.url);
    await ownerLink.synced();
    await server.access.grant(REPO, member.session.publicKey, "read");

    const memberNotes = await member.open(REPO);
    const memberLink = sync(member, server.url);
    const errors: string[] = [];
    memberLink.on("error", (err) => errors.push(err.code));
    await memberLink.synced();
    assert.equal(memberNotes.count(), 1);
    memberNotes.create(Note, { title: "the member's" });
    await waitFor(() => errors.includes("E_FORBIDDEN"), "the refusal to write reported");
    assert.equal(memberLink.unacknowledged, 1);

    await server.access.grant(REPO, member.session.publicKey, "write");
    await waitFor(() => memberLink.unacknowledged === 0, "the waiting block pushed");
    await waitFor(() => ownerNotes.count() === 2, "the owner sees the member's note");

    await server.access.revoke(REPO, member.session.publicKey);
    await waitFor(() => errors.filter((code) => code === "E_FORBIDDEN").length >= 2, "denied");
    ownerNotes.create(Note, { title: "after the revocation" });
    await ownerLink.synced();
    // The server unsubscribed the member before it sent `denied` (awaited above): nothing of
    // the owner's later write is sent to it (the raw-protocol tests above check the frames).
    await memberLink.close();
    assert.equal(memberNotes.count(), 2, "the revoked reader received a write made after it");
    await ownerLink.close();
    await Promise.all([owner.close(), member.close()]);
  });
});
