// The sync server example of docs/sync.md, kept compiling (deno task check) and running (test/server/sync_docs.test.ts).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cairn } from "cairndb";
import { createSyncServer } from "cairndb/server";

const dir = await mkdtemp(join(tmpdir(), "cairn-sync-"));
const server = await createSyncServer({ dir, port: 0 }); // port 0: any free port
console.log(server.url); // "ws://127.0.0.1:…" — what clients connect to

// Built-in rules: the first session to write a repository owns it; the server grants the rest.
const bob = await Cairn.open();
await server.access.grant("/data/todos", bob.session.publicKey, "read");
await server.access.setPublicRead("/data/news", true);
console.log(server.access.rules("/data/todos").members[bob.session.publicKey]); // "read"

await server.close(); // goaway to every client, their pending acks sent, then closed
await rm(dir, { recursive: true });
