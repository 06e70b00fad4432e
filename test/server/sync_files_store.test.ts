/**
 * The files store (the sync server's embedded storage) on real files: pushes applied together
 * share durable writes (group commit), positions follow the order of applies and survive a
 * restart (the log order exportBlocks gives), duplicates are told apart from blocks applied, and a
 * repository whose log is found damaged gets a new epoch.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { openBackend } from "../../src/storage/backends/select.ts";
import type { StorageBackend } from "../../src/storage/backend.ts";
import { openFilesStore } from "../../src/sync/server/files_store.ts";
import { isCairnError } from "../../src/core/errors.ts";
import { asArrays, authorized, blocksOf, newSession } from "../harness/sync_client.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";

/** The real backend, calling `onLogSync` before each sync of a log file (it may throw). */
function seeingLogSyncs(onLogSync: () => void) {
  return async (path: string): Promise<StorageBackend> => {
    const backend = await openBackend(path);
    return {
      ...backend,
      kind: backend.kind,
      readFile: (name) => backend.readFile(name),
      readRange: (name, offset, length) => backend.readRange(name, offset, length),
      writeFileAtomic: (name, bytes) => backend.writeFileAtomic(name, bytes),
      removeFile: (name) => backend.removeFile(name),
      listFiles: () => backend.listFiles(),
      acquireLock: () => backend.acquireLock(),
      releaseLock: () => backend.releaseLock(),
      close: () => backend.close(),
      async openAppend(name) {
        const file = await backend.openAppend(name);
        return {
          get size() {
            return file.size;
          },
          append: (bytes) => file.append(bytes),
          sync: async () => {
            if (name.endsWith(".log")) onLogSync();
            await file.sync();
          },
          truncate: (to) => file.truncate(to),
          close: () => file.close(),
        };
      },
    };
  };
}

test("files store: applies arriving together share fsyncs, and are placed in arrival order; reopened, the same blocks, positions and writers", async () => {
  await withTempDirectory("files-store", async (dir) => {
    const counter = { syncs: 0 };
    const store = await openFilesStore(dir, { openStorage: seeingLogSyncs(() => counter.syncs++) });
    const repository = await store.openRepository("/data/group");
    const sessions = await Promise.all(Array.from({ length: 12 }, () => newSession()));
    const pushes = await Promise.all(
      sessions.map((session) => blocksOf(session, "/data/group", 1)),
    );
    const blocks = await Promise.all(pushes.map(authorized));
    const before = counter.syncs;
    const results = await Promise.all(blocks.map((push) => repository.apply(push)));
    const syncs = counter.syncs - before;
    assert.ok(syncs < pushes.length, `${pushes.length} durable pushes took ${syncs} fsyncs`);
    assert.deepEqual(
      results.map((result) => result.outcomes),
      pushes.map((_, i) => [{ status: "applied", position: i + 1 }]),
    );
    assert.equal(repository.head(), 12);
    const again = await repository.apply(await authorized([...pushes[0], ...pushes[0]]));
    assert.deepEqual(again.outcomes, [{ status: "duplicate" }, { status: "duplicate" }]);
    // Later blocks of a writer placed already.
    const later = await blocksOf(sessions[3], "/data/group", 2, 1);
    await repository.apply(await authorized(later));
    const writers = await repository.writersAfter(0);
    assert.equal(writers.length, 12);
    await store.close();
    // Reopened: the same blocks at the same positions, the same writers, the same epoch.
    const reopened = await openFilesStore(dir);
    const same = await reopened.openRepository("/data/group");
    assert.equal(same.epoch, repository.epoch);
    assert.deepEqual(
      asArrays((await same.readAfter(0, 1 << 20)).map((block) => block.bytes)),
      asArrays([...pushes.flat(), ...later]),
    );
    assert.deepEqual(await same.writersAfter(0), writers);
    assert.deepEqual((await same.writersAfter(3)).length, 9);
    await reopened.close();
  });
});

test("files store: a block whose flush failed is not in the version vector until stored", async () => {
  await withTempDirectory("files-store", async (dir) => {
    const disk = { full: false };
    const store = await openFilesStore(dir, {
      openStorage: seeingLogSyncs(() => {
        if (disk.full) throw new Error("no space left on device");
      }),
    });
    const repository = await store.openRepository("/data/flaky");
    const [first, second] = await authorized(await blocksOf(await newSession(), "/data/flaky", 2));
    await repository.apply([first]);
    disk.full = true;
    await assert.rejects(repository.apply([second]), /no space left/);
    // A subscriber by version vector is told what is stored, so the pusher sends it again.
    assert.deepEqual(await repository.versionVector(), { [first.session]: 1 });
    disk.full = false;
    const retried = await repository.apply([second]);
    assert.deepEqual(retried.outcomes, [{ status: "applied", position: 2 }]);
    assert.deepEqual(await repository.versionVector(), { [first.session]: 2 });
    await store.close();
  });
});

test("files store: a block and its duplicate in one apply: applied once, then duplicate", async () => {
  await withTempDirectory("files-store", async (dir) => {
    const store = await openFilesStore(dir);
    const repository = await store.openRepository("/data/twice");
    const [block] = await blocksOf(await newSession(), "/data/twice", 1);
    const result = await repository.apply(await authorized([block, block]));
    assert.deepEqual(result.outcomes, [{ status: "applied", position: 1 }, {
      status: "duplicate",
    }]);
    assert.equal(result.newWriters.length, 1);
    await store.close();
  });
});

test("files store: a repository whose log is damaged gets a new epoch; others keep theirs", async () => {
  await withTempDirectory("files-store", async (dir) => {
    const session = await newSession();
    const store = await openFilesStore(dir);
    const damaged = await store.openRepository("/data/damaged");
    const intact = await store.openRepository("/data/intact");
    await damaged.apply(await authorized(await blocksOf(session, "/data/damaged", 6)));
    await intact.apply(await authorized(await blocksOf(session, "/data/intact", 2)));
    const [epoch, intactEpoch] = [damaged.epoch, intact.epoch];
    await store.close();
    const log = `${dir}/repositories/data~damaged.log`;
    const bytes = await readFile(log);
    bytes[Math.floor(bytes.length / 2)] ^= 0xff;
    await writeFile(log, bytes);
    const reopened = await openFilesStore(dir);
    const after = await reopened.openRepository("/data/damaged");
    assert.notEqual(after.epoch, epoch);
    assert.equal((await reopened.openRepository("/data/intact")).epoch, intactEpoch);
    await reopened.close();
  });
});

test("files store: reading a repository nobody wrote creates no files; the first apply does", async () => {
  await withTempDirectory("files-store", async (dir) => {
    const store = await openFilesStore(dir);
    const repository = await store.openRepository("/data/unwritten");
    assert.equal(repository.head(), 0);
    assert.deepEqual(await repository.readAfter(0, 1000), []);
    assert.deepEqual(await repository.versionVector(), {});
    await repository.close();
    const files = () => readdir(`${dir}/repositories`);
    assert.ok(!(await files()).some((name) => name.startsWith("data~unwritten")));
    const again = await store.openRepository("/data/unwritten");
    const blocks = await blocksOf(await newSession(), "/data/unwritten", 2);
    const result = await again.apply(await authorized(blocks));
    assert.deepEqual(result.outcomes.map((o) => o.status), ["applied", "applied"]);
    assert.ok((await files()).includes("data~unwritten.log"));
    await store.close();
  });
});

test("files store: two servers started at once on a new directory: one is refused (E_LOCKED) before it touches the identity; the other's is the one stored", async () => {
  for (let round = 0; round < 10; round++) {
    await withTempDirectory("files-store-race", async (dir) => {
      const opened = await Promise.allSettled([openFilesStore(dir), openFilesStore(dir)]);
      const running = opened.flatMap((o) => o.status === "fulfilled" ? [o.value] : []);
      const refused = opened.flatMap((o) => o.status === "rejected" ? [o.reason] : []);
      try {
        assert.equal(running.length, 1, `round ${round}`);
        assert.ok(isCairnError(refused[0], "E_LOCKED"), `round ${round}: ${refused[0]}`);
        const stored = JSON.parse(await readFile(`${dir}/server.json`, "utf8"));
        assert.equal(running[0].serverId, stored.serverId, `round ${round}`);
      } finally {
        for (const store of running) await store.close();
      }
      // Restarted, it is the same server.
      const again = await openFilesStore(dir);
      assert.equal(again.serverId, running[0].serverId);
      await again.close();
    });
  }
});
