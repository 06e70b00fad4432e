/**
 * Sync across runtimes (run on Deno and on Node): a Deno server and a Node server, each in its
 * own process, with a Deno client and a Node client in processes of their own and one client in
 * the process running the test. Every client ends with every client's notes. (Chromium clients
 * are checked by the browser section: scripts/lib/browser_sync_pages.ts.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Cairn, defineSchema, sync } from "cairndb";
import { Child, type ChildRuntime } from "../harness/child_process.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";
import { TITLE_AND_BODY } from "../harness/schemas.ts";

const Note = defineSchema(TITLE_AND_BODY);

const NOTES_EACH = 3;
const CLIENT_RUNTIMES: readonly ChildRuntime[] = ["deno", "node"];
const HERE = "Deno" in globalThis ? "deno (test process)" : "node (test process)";

for (const serverRuntime of ["deno", "node"] as const) {
  test(`a ${serverRuntime} server syncs Deno and Node clients in separate processes`, async () => {
    await withTempDirectory(`sync-runtimes-${serverRuntime}`, async (dir) => {
      const server = new Child(serverRuntime, "test/fixtures/sync_server.mjs", [join(dir, "s")]);
      const children: Child[] = [];
      try {
        const url = await server.line("listening");
        const total = NOTES_EACH * (CLIENT_RUNTIMES.length + 1);
        for (const runtime of CLIENT_RUNTIMES) {
          children.push(
            new Child(runtime, "test/fixtures/sync_client.mjs", [
              url,
              runtime,
              String(NOTES_EACH),
              String(total),
            ]),
          );
        }
        const db = await Cairn.open({ schemas: [Note] });
        const link = sync(db, url, { backoff: { initialMs: 5, maxMs: 100 } });
        const notes = await db.open("/data/runtimes");
        for (let i = 0; i < NOTES_EACH; i++) notes.create(Note, { title: `${HERE} ${i}` });
        await link.synced();

        const expected = [HERE, ...CLIENT_RUNTIMES].flatMap((name) =>
          Array.from({ length: NOTES_EACH }, (_, i) => `${name} ${i}`)
        ).sort();
        for (const child of children) {
          assert.deepEqual(JSON.parse(await child.line("titles")), expected);
          assert.equal(await child.exited, 0);
        }
        for (let i = 0; notes.count() < total && i < 1000; i++) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        const titles = [...notes.keys()].map((key) => notes.get(key, Note)!.get("title")).sort();
        assert.deepEqual(titles, expected);
        // A note written on one runtime reads the same on another: its text came through whole.
        const fromNode = [...notes.keys()].map((key) => notes.get(key, Note)!).find((note) =>
          note.get("title") === "node 0"
        );
        assert.equal(fromNode?.get("body"), "written on node");
        await link.close();
        await db.close();
        server.terminate();
        assert.equal(await server.line("stopped"), "");
      } finally {
        for (const child of children) child.kill();
        server.kill();
      }
    });
  });
}
