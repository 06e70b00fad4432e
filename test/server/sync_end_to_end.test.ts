/**
 * Sync end to end (Deno and Node): databases linked by `sync()` through a real server on a real
 * socket (port 0, a temporary directory) converge, write offline and catch up, keep what they
 * wrote across a restart, and `synced()` means the server holds it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Cairn } from "../../src/db/database.ts";
import { defineSchema } from "../../src/core/schema.ts";
import { isCairnError } from "../../src/core/errors.ts";
import { sync, type SyncLink } from "../../src/sync/client.ts";
import { createSyncServer, type SyncServer } from "../../src/sync/server/create_server.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";
import { waitFor } from "../harness/wait.ts";

const Task = defineSchema({
  ns: "task",
  version: 1,
  fields: {
    title: { type: "string", required: true },
    done: { type: "boolean", default: false },
    notes: { type: "text" },
  },
});

const PATH = "/data/todos";
const FAST = { backoff: { initialMs: 5, maxMs: 50 } };

/** A server in a temporary directory, open to every session; stopped after `run`. */
async function withServer(
  run: (server: SyncServer, dir: string) => Promise<void>,
  options: { open?: boolean } = { open: true },
): Promise<void> {
  await withTempDirectory("sync-e2e", async (dir) => {
    const server = await createSyncServer({ dir: join(dir, "server"), port: 0, ...options });
    try {
      await run(server, dir);
    } finally {
      await server.close();
    }
  });
}

function titles(repo: Awaited<ReturnType<Cairn["open"]>>): string[] {
  return [...repo.keys()].map((key) => repo.get(key, Task)!.get("title")).sort();
}

test("two databases converge through a server on creates, edits and text", async () => {
  await withServer(async (server) => {
    const alice = await Cairn.open({ schemas: [Task] });
    const bob = await Cairn.open({ schemas: [Task] });
    const aliceTodos = await alice.open(PATH);
    const bobTodos = await bob.open(PATH);
    const aliceLink = sync(alice, server.url, FAST);
    const bobLink = sync(bob, server.url, FAST);
    try {
      const task = aliceTodos.create(Task, { title: "write tests", notes: "hello world" });
      await aliceLink.synced();
      await waitFor(() => bobTodos.has(task.key), "bob sees alice's task");
      const bobTask = bobTodos.get(task.key, Task)!;
      assert.equal(bobTask.get("notes"), "hello world");

      // Concurrent edits on both sides, text included.
      bobTask.insertText("notes", 5, " brave");
      bobTask.set("done", true);
      task.insertText("notes", 11, "!");
      bobTodos.create(Task, { title: "from bob" });
      await Promise.all([aliceLink.synced(), bobLink.synced()]);
      await waitFor(
        () =>
          aliceTodos.count() === 2 && task.get("done") === true &&
          task.get("notes") === bobTask.get("notes") && bobTask.get("notes")!.endsWith("!"),
        "both sides merged",
      );
      assert.equal(task.get("notes"), "hello brave world!");
      assert.deepEqual(titles(aliceTodos), ["from bob", "write tests"]);
      assert.deepEqual(titles(bobTodos), titles(aliceTodos));
      assert.deepEqual(aliceTodos.versionVector(), bobTodos.versionVector());
      assert.equal(aliceLink.lastError, undefined);
      assert.equal(bobLink.lastError, undefined);
    } finally {
      await aliceLink.close();
      await bobLink.close();
      await alice.close();
      await bob.close();
    }
  });
});

test("writes made offline are pushed after reconnecting; synced() means the server holds them", async () => {
  await withTempDirectory("sync-offline", async (dir) => {
    const serverDir = join(dir, "server");
    let server = await createSyncServer({ dir: serverDir, port: 0, open: true });
    const port = server.port;
    const alice = await Cairn.open({ schemas: [Task] });
    const todos = await alice.open(PATH);
    const link = sync(alice, server.url, FAST);
    try {
      todos.create(Task, { title: "online" });
      await link.synced();
      assert.equal(link.unacknowledged, 0);
      await server.close();
      await waitFor(() => link.status === "offline", "offline");
      for (let i = 0; i < 5; i++) todos.create(Task, { title: `offline ${i}` });
      await todos.flush();
      assert.ok(link.unacknowledged >= 1);
      let resolved = false;
      const synced = link.synced().then(() => resolved = true);
      await new Promise((resolve) => setTimeout(resolve, 30));
      assert.equal(resolved, false, "synced() waits while the server is away");

      server = await createSyncServer({ dir: serverDir, port, open: true });
      await synced;
      assert.equal(link.unacknowledged, 0);
      // A new database reading the server sees every write.
      const carol = await Cairn.open({ schemas: [Task] });
      const carolTodos = await carol.open(PATH);
      const carolLink = sync(carol, server.url, FAST);
      await carolLink.synced();
      assert.equal(carolTodos.count(), 6);
      await carolLink.close();
      await carol.close();
    } finally {
      await link.close();
      await alice.close();
      await server.close();
    }
  });
});

test("what was written before an app restart, never acknowledged, reaches the server after it", async () => {
  await withServer(async (server, dir) => {
    const path = join(dir, "alice");
    // Written and stored, but never synced: the app stops before any link runs.
    const before = await Cairn.open({ path, schemas: [Task] });
    const todos = await before.open(PATH);
    for (let i = 0; i < 3; i++) todos.create(Task, { title: `before restart ${i}` });
    await before.close();

    const alice = await Cairn.open({ path, schemas: [Task] });
    await alice.open(PATH);
    const link = sync(alice, server.url, FAST);
    await link.synced();
    const bob = await Cairn.open({ schemas: [Task] });
    const bobTodos = await bob.open(PATH);
    const bobLink = sync(bob, server.url, FAST);
    await bobLink.synced();
    assert.equal(bobTodos.count(), 3);
    await Promise.all([link.close(), bobLink.close()]);
    await Promise.all([alice.close(), bob.close()]);
  });
});

test("a large tick is sealed into blocks that fit frames, and syncs whole", async () => {
  await withServer(async (server) => {
    const alice = await Cairn.open({ schemas: [Task] });
    const bob = await Cairn.open({ schemas: [Task] });
    const aliceTodos = await alice.open(PATH);
    const bobTodos = await bob.open(PATH);
    const links = [sync(alice, server.url, FAST), sync(bob, server.url, FAST)];
    try {
      // ~3 MB in one tick: several blocks of at most 256 KiB, several frames of at most 1 MiB.
      for (let i = 0; i < 3000; i++) {
        aliceTodos.create(Task, { title: `task ${i} ${"x".repeat(1000)}` });
      }
      await links[0].synced();
      await waitFor(() => bobTodos.count() === 3000, "bob has every task");
      assert.ok(Object.values(aliceTodos.versionVector())[0] > 10);
      assert.equal(links[0].lastError, undefined);
    } finally {
      for (const link of links) await link.close();
      await alice.close();
      await bob.close();
    }
  });
});

test("a client refused writing by the server's rules reports E_FORBIDDEN; readers still read", async () => {
  await withServer(async (server) => {
    const owner = await Cairn.open({ schemas: [Task] });
    const stranger = await Cairn.open({ schemas: [Task] });
    const ownerTodos = await owner.open(PATH);
    const strangerTodos = await stranger.open(PATH);
    const ownerLink = sync(owner, server.url, FAST);
    let strangerLink: SyncLink | undefined;
    try {
      ownerTodos.create(Task, { title: "owned" });
      await ownerLink.synced(); // the first writer claims the repository
      await server.access.setPublicRead(PATH, true);
      strangerLink = sync(stranger, server.url, FAST);
      const errors: unknown[] = [];
      strangerLink.on("error", (err) => errors.push(err));
      await strangerLink.synced();
      assert.equal(strangerTodos.count(), 1);
      strangerTodos.create(Task, { title: "not allowed" });
      await strangerLink.synced();
      await waitFor(() => errors.some((err) => isCairnError(err, "E_FORBIDDEN")), "refused");
      assert.equal(ownerTodos.count(), 1);
    } finally {
      await strangerLink?.close();
      await ownerLink.close();
      await owner.close();
      await stranger.close();
    }
  }, {});
});
