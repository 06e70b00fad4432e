// Sync in ten lines: a server and two databases in one process (run by test/server/sync_example.test.ts).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cairn, defineSchema, sync } from "cairndb";
import { createSyncServer } from "cairndb/server";

const Note = defineSchema({ ns: "note", version: 1, fields: { title: { type: "string" } } });
const dir = await mkdtemp(join(tmpdir(), "cairn-sync-example-"));
const server = await createSyncServer({ dir, port: 0, open: true }); // open: anyone may write

const alice = await Cairn.open({ schemas: [Note] });
const aliceLink = sync(alice, server.url); // every repository alice opens, in both directions
const aliceNotes = await alice.open("/notes");
aliceNotes.create(Note, { title: "hello from alice" });
await aliceLink.synced(); // the server holds alice's note (durably)

const bob = await Cairn.open({ schemas: [Note] });
const bobNotes = await bob.open("/notes");
const bobLink = sync(bob, server.url);
await bobLink.synced(); // bob has caught up; later changes are pushed to him as they happen
console.log(bobNotes.count()); // 1

await Promise.all([aliceLink.close(), bobLink.close()]);
await Promise.all([alice.close(), bob.close(), server.close()]);
await rm(dir, { recursive: true });
