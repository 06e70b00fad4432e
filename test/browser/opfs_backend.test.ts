import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, defineSchema, isCairnError } from "cairndb";
import { openOpfsBackend, type OpfsBackend } from "../../src/storage/backends/opfs.ts";
import { opfsWorkerUrl } from "../../src/storage/backends/opfs_worker_url.ts";
import { REQUIRED_TITLE } from "../harness/schemas.ts";
import { settledWithin, waitFor } from "../harness/wait.ts";

const Note = defineSchema(REQUIRED_TITLE);

/** Runs `fn` with a backend on a fresh directory, then closes it and removes the directory. */
async function withBackend(fn: (backend: OpfsBackend, dir: string) => Promise<void>) {
  const dir = `cairn-test/test-${crypto.randomUUID()}`;
  const backend = await openOpfsBackend(dir);
  try {
    await fn(backend, dir);
  } finally {
    await backend.close().catch(() => {});
    await removeDirectory(dir);
  }
}

async function removeDirectory(dir: string): Promise<void> {
  const [parent, name] = dir.split("/");
  const root = await navigator.storage.getDirectory();
  const handle = await root.getDirectoryHandle(parent);
  await handle.removeEntry(name, { recursive: true });
}

function bytesOf(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

function textOf(bytes: Uint8Array | undefined): string | undefined {
  return bytes && new TextDecoder().decode(bytes);
}

/** Deterministic bytes (not all zero), so misplaced chunks show. */
function pattern(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed | 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** Matches an error by its CairnError code. */
function isCode(code: string) {
  return (err: unknown) => (err as { code?: unknown } | undefined)?.code === code;
}

test("opfs: a missing file reads as undefined, an empty directory lists nothing", async () => {
  await withBackend(async (backend) => {
    assert.equal(backend.kind, "opfs");
    assert.equal(await backend.readFile("nope.log"), undefined);
    assert.deepEqual(await backend.listFiles(), []);
  });
});

test("opfs: many small appends, awaited or not, read back as their exact concatenation", async () => {
  await withBackend(async (backend) => {
    const file = await backend.openAppend("a.log");
    assert.equal(file.size, 0);
    const chunks: Uint8Array[] = [];
    // 500 appends in one tick (coalesced into one batch), then 200 awaited one by one, with the
    // caller reusing its buffer right after each call.
    const reused = new Uint8Array(64);
    const inOneTick: Promise<void>[] = [];
    for (let i = 0; i < 500; i++) {
      const chunk = pattern(1 + (i % 37), i + 1);
      chunks.push(chunk);
      reused.set(chunk);
      inOneTick.push(file.append(reused.subarray(0, chunk.length)));
      reused.fill(0);
    }
    await Promise.all(inOneTick);
    for (let i = 0; i < 200; i++) {
      const chunk = pattern(100, 1000 + i);
      chunks.push(chunk);
      await file.append(chunk);
    }
    const expected = concat(chunks);
    assert.equal(file.size, expected.length);
    await file.sync();
    // Reading while the file is open goes through the open handle.
    assert.deepEqual(await backend.readFile("a.log"), expected);
    await file.close();
    assert.deepEqual(await backend.readFile("a.log"), expected);
  });
});

test("opfs: appends issued across ticks without awaiting keep their order", async () => {
  await withBackend(async (backend) => {
    const file = await backend.openAppend("b.log");
    const writes: Promise<void>[] = [];
    let expected = "";
    for (let i = 0; i < 300; i++) {
      const line = `line ${i}\n`;
      expected += line;
      writes.push(file.append(bytesOf(line)));
      if (i % 7 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
    }
    await Promise.all(writes);
    assert.equal(file.size, expected.length);
    await file.close();
    assert.equal(textOf(await backend.readFile("b.log")), expected);
  });
});

test("opfs: a read sees every append issued before it, even unawaited ones", async () => {
  await withBackend(async (backend) => {
    const file = await backend.openAppend("r.log");
    const written = file.append(bytesOf("not yet awaited"));
    assert.equal(textOf(await backend.readFile("r.log")), "not yet awaited");
    await written;
    await file.close();
  });
});

test("opfs: reopening a file appends after its existing bytes", async () => {
  await withBackend(async (backend) => {
    let file = await backend.openAppend("c.log");
    await file.append(bytesOf("hello "));
    await file.sync();
    await file.close();
    file = await backend.openAppend("c.log");
    assert.equal(file.size, 6);
    await file.append(bytesOf("world"));
    await file.close();
    assert.equal(textOf(await backend.readFile("c.log")), "hello world");
  });
});

test("opfs: truncate cuts a torn tail and later appends follow the cut", async () => {
  await withBackend(async (backend) => {
    const file = await backend.openAppend("d.log");
    await file.append(bytesOf("good|torn-tail"));
    await file.truncate(5);
    assert.equal(file.size, 5);
    await file.append(bytesOf("next"));
    await file.sync();
    assert.equal(textOf(await backend.readFile("d.log")), "good|next");
    await file.close();
  });
});

test("opfs: a file is open for appending once at a time", async () => {
  await withBackend(async (backend) => {
    const file = await backend.openAppend("e.log");
    await assert.rejects(backend.openAppend("e.log"), isCode("E_BAD_ARGUMENT"));
    await file.close();
    const again = await backend.openAppend("e.log");
    await again.close();
  });
});

test("opfs: writeFileAtomic creates, then replaces content, leaving no temporary file", async () => {
  await withBackend(async (backend) => {
    await backend.writeFileAtomic("checkpoint", bytesOf("first version, longer"));
    assert.equal(textOf(await backend.readFile("checkpoint")), "first version, longer");
    await backend.writeFileAtomic("checkpoint", bytesOf("second"));
    assert.equal(textOf(await backend.readFile("checkpoint")), "second");
    await backend.writeFileAtomic("checkpoint", new Uint8Array(0));
    assert.deepEqual(await backend.readFile("checkpoint"), new Uint8Array(0));
    assert.deepEqual(await backend.listFiles(), ["checkpoint"]);
  });
});

test("opfs: listFiles and removeFile", async () => {
  await withBackend(async (backend) => {
    await backend.writeFileAtomic("b", bytesOf("2"));
    await backend.writeFileAtomic("a", bytesOf("1"));
    const log = await backend.openAppend("c.log");
    await log.close();
    assert.deepEqual(await backend.listFiles(), ["a", "b", "c.log"]);
    await backend.removeFile("a");
    await backend.removeFile("a"); // removing a missing file is not an error
    assert.deepEqual(await backend.listFiles(), ["b", "c.log"]);
    assert.equal(await backend.readFile("a"), undefined);
  });
});

test("opfs: names and directories that are not flat names are refused", async () => {
  await withBackend(async (backend) => {
    await assert.rejects(backend.readFile("x/y"), isCode("E_BAD_ARGUMENT"));
    await assert.rejects(backend.openAppend(".."), isCode("E_BAD_ARGUMENT"));
    await assert.rejects(backend.writeFileAtomic("", new Uint8Array(1)), isCode("E_BAD_ARGUMENT"));
  });
  await assert.rejects(openOpfsBackend("a/../b"), isCode("E_BAD_ARGUMENT"));
  await assert.rejects(openOpfsBackend("/"), isCode("E_BAD_ARGUMENT"));
});

test("opfs: a second backend on the same directory gets E_LOCKED until the first releases", async () => {
  await withBackend(async (first, dir) => {
    // A second worker in this page stands in for a second tab.
    const second = await openOpfsBackend(dir);
    const other = await openOpfsBackend(`${dir}-other`);
    try {
      await first.acquireLock();
      await first.acquireLock(); // already held: no-op
      await assert.rejects(second.acquireLock(), isCode("E_LOCKED"));
      await other.acquireLock(); // another directory has its own lock
      await first.releaseLock();
      await second.acquireLock();
      await assert.rejects(first.acquireLock(), isCode("E_LOCKED"));
      await second.releaseLock();
    } finally {
      await second.close();
      await other.close();
      await removeDirectory(`${dir}-other`);
    }
  });
});

test("opfs: closing the backend frees the lock and the handles for the next one", async () => {
  await withBackend(async (first, dir) => {
    await first.acquireLock();
    const file = await first.openAppend("data.log");
    const pending = file.append(bytesOf("written before close"));
    await first.close(); // closes the file (writing the pending batch) and the lock
    await pending;
    await assert.rejects(file.append(bytesOf("late")), isCode("E_CLOSED"));
    await assert.rejects(file.sync(), isCode("E_CLOSED"));
    await assert.rejects(first.readFile("data.log"), isCode("E_CLOSED"));
    await assert.rejects(first.acquireLock(), isCode("E_CLOSED"));
    await first.close(); // idempotent

    const reopened = await openOpfsBackend(dir);
    try {
      await reopened.acquireLock();
      const again = await reopened.openAppend("data.log");
      assert.equal(again.size, "written before close".length);
      await again.append(bytesOf("!"));
      await again.close();
      await assert.rejects(again.append(bytesOf("?")), isCode("E_CLOSED"));
      assert.equal(textOf(await reopened.readFile("data.log")), "written before close!");
    } finally {
      await reopened.close();
    }
  });
});

test("opfs: a worker that ends without an error event fails what waits on it with E_IO, and lets go of the directory", async () => {
  const dir = `cairn-test/test-${crypto.randomUUID()}`;
  // The real worker, which closes itself (no error event) when asked to read "close-yourself":
  // as one the browser ends does. Its writes and its close waited for good before.
  const script = `import ${JSON.stringify(String(opfsWorkerUrl()))};
    addEventListener("message", (event) => {
      if (event.data.request.name === "close-yourself") self.close();
    });`;
  const workerUrl = URL.createObjectURL(new Blob([script], { type: "text/javascript" }));
  try {
    const backend = await openOpfsBackend(dir, { workerUrl });
    await backend.acquireLock();
    const file = await backend.openAppend("data.log");
    await file.append(bytesOf("kept"));
    const asked = backend.readFile("close-yourself");
    const appended = file.append(bytesOf("asked after"));
    for (const [what, waiting] of [["the read", asked], ["the append", appended]] as const) {
      const outcome = await settledWithin(waiting, 10_000);
      assert.ok(isCode("E_IO")(outcome), `${what}: ${String(outcome)}`);
      assert.match((outcome as Error).message, /OPFS worker ended/);
    }
    await assert.rejects(file.append(bytesOf("later")), isCode("E_IO"));
    assert.notEqual(await settledWithin(backend.close(), 10_000), "pending");
    // Its directory lock went with it: the next backend takes the directory.
    const next = await openOpfsBackend(dir);
    try {
      await next.acquireLock();
      assert.equal(textOf(await next.readFile("data.log"))?.startsWith("kept"), true);
    } finally {
      await next.close();
    }
  } finally {
    URL.revokeObjectURL(workerUrl);
    await removeDirectory(dir);
  }
});

/** The real worker, which closes itself (no error event) when told so on a BroadcastChannel. */
function endingWorker(): { workerUrl: string; end(): void; dispose(): void } {
  const channel = `cairn-test-worker-${crypto.randomUUID()}`;
  const script = `import ${JSON.stringify(String(opfsWorkerUrl()))};
    new BroadcastChannel(${JSON.stringify(channel)}).onmessage = () => self.close();`;
  const workerUrl = URL.createObjectURL(new Blob([script], { type: "text/javascript" }));
  const killer = new BroadcastChannel(channel);
  return {
    workerUrl,
    end: () => killer.postMessage("end"),
    dispose: () => {
      killer.close();
      URL.revokeObjectURL(workerUrl);
    },
  };
}

test("opfs: a database whose worker ends closes itself, says so, and opens again with what it stored", async () => {
  const path = `cairn-test/test-${crypto.randomUUID()}`;
  const worker = endingWorker();
  const warnings: string[] = [];
  try {
    const db = await Cairn.open({
      path,
      workerUrl: worker.workerUrl,
      onWarning: (warning) => warnings.push(warning.message),
    });
    const repo = await db.open("/notes");
    repo.create(Note, { title: "stored" }, { key: "a" });
    await db.flush();
    worker.end();
    // It can store nothing more: it closes (before, it stayed open, every write failing E_IO).
    await waitFor(() => db.closed, "the database closed");
    assert.match(warnings.join("\n"), /can store nothing more .*OPFS worker ended/);
    assert.throws(() => repo.create(Note, { title: "too late" }), isCode("E_CLOSED"));
    await assert.rejects(db.flush(), isCode("E_CLOSED"));
    assert.equal(await settledWithin(db.close(), 10_000), "resolved");
    const again = await Cairn.open({ path, schemas: [Note] });
    try {
      assert.equal((await again.open("/notes")).get("a")?.toObject().title, "stored");
    } finally {
      await again.close();
    }
  } finally {
    worker.dispose();
    await removeDirectory(path);
  }
});

test("opfs: a leading tab whose worker ends lets go of the lead: the other tab stores its writes", async () => {
  const path = `cairn-test/test-${crypto.randomUUID()}`;
  const worker = endingWorker();
  try {
    // Two databases on one path in one page lead and follow as two tabs would.
    const leader = await Cairn.open({ path, workerUrl: worker.workerUrl, onWarning: () => {} });
    (await leader.open("/notes")).create(Note, { title: "by the leader" }, { key: "a" });
    await leader.flush();
    const follower = await Cairn.open({ path, schemas: [Note] });
    const notes = await follower.open("/notes");
    worker.end();
    await waitFor(() => leader.closed, "the leader closed");
    // Its followers' writes failed E_IO for as long as the leader's app kept it open, before.
    notes.create(Note, { title: "by the follower" }, { key: "b" });
    const flushed = await settledWithin(follower.flush(), 15_000);
    assert.equal(flushed, "resolved", String(flushed));
    await follower.close();
    const again = await Cairn.open({ path, schemas: [Note] });
    try {
      assert.deepEqual([...(await again.open("/notes")).keys()].sort(), ["a", "b"]);
    } finally {
      await again.close();
    }
  } finally {
    worker.dispose();
    await removeDirectory(path);
  }
});

test("opfs: OPFS errors cross the worker boundary as E_IO naming the DOMException", async () => {
  await withBackend(async (backend, dir) => {
    const file = await backend.openAppend("busy.log");
    // A second worker cannot open a sync handle on a file the first one holds.
    const second = await openOpfsBackend(dir);
    try {
      await assert.rejects(second.openAppend("busy.log"), (err: unknown) => {
        assert.ok(isCairnError(err, "E_IO"), String(err));
        assert.match(err.message, /NoModificationAllowedError/);
        return true;
      });
      // A reader elsewhere still sees the bytes (through a Blob read).
      await file.append(bytesOf("abc"));
      await file.sync();
      assert.equal(textOf(await second.readFile("busy.log")), "abc");
    } finally {
      await second.close();
      await file.close();
    }
  });
});

test("opfs: readRange reads a part of a file, also one another worker holds open", async () => {
  await withBackend(async (backend, dir) => {
    const bytes = pattern(5000, 7);
    await backend.writeFileAtomic("r.bin", bytes);
    assert.deepEqual(await backend.readRange("r.bin", 4000, 2000), {
      bytes: bytes.slice(4000),
      size: 5000,
    });
    assert.equal(await backend.readRange("none.bin", 0, 10), undefined);
    await assert.rejects(backend.readRange("r.bin", -1, 10), isCode("E_BAD_ARGUMENT"));
    // Through the open append handle, with an append not awaited yet.
    const file = await backend.openAppend("r.bin");
    const appended = file.append(bytesOf("tail"));
    assert.deepEqual(await backend.readRange("r.bin", 4998, 100), {
      bytes: concat([bytes.slice(4998), bytesOf("tail")]),
      size: 5004,
    });
    await appended;
    // Held by this worker's append handle: a second worker reads through a Blob slice.
    const second = await openOpfsBackend(dir);
    try {
      await file.sync();
      const range = await second.readRange("r.bin", 4998, 100);
      assert.equal(range?.size, 5004);
      assert.deepEqual(range?.bytes, concat([bytes.slice(4998), bytesOf("tail")]));
    } finally {
      await second.close();
      await file.close();
    }
  });
});

test(
  "opfs: 8 MiB round trip through appends and writeFileAtomic",
  { timeout: 60_000 },
  async () => {
    await withBackend(async (backend) => {
      const big = pattern(8 * 1024 * 1024, 42);
      const file = await backend.openAppend("big.log");
      // In 1 MiB batches, then one byte, so a batch straddles nothing.
      for (let at = 0; at < big.length; at += 1024 * 1024) {
        await file.append(big.subarray(at, at + 1024 * 1024));
      }
      await file.sync();
      await file.close();
      const read = await backend.readFile("big.log");
      assert.equal(read?.length, big.length);
      assert.ok(read && read.every((b, i) => b === big[i]), "appended bytes differ");

      await backend.writeFileAtomic("big.checkpoint", big);
      const checkpoint = await backend.readFile("big.checkpoint");
      assert.equal(checkpoint?.length, big.length);
      assert.ok(checkpoint && checkpoint.every((b, i) => b === big[i]), "checkpoint bytes differ");
    });
  },
);

test("opfs: Chromium has FileSystemHandle.move, so writeFileAtomic takes the atomic path", () => {
  const proto = FileSystemFileHandle.prototype as unknown as { move?: unknown };
  assert.equal(typeof proto.move, "function");
});

test("opfs: a worker script that cannot load fails open with E_IO naming its URL and the fix", async () => {
  const dir = `cairn-test/test-${crypto.randomUUID()}`;
  const workerUrl = new URL("/no-such-dir/opfs_worker.js", location.href);
  await assert.rejects(openOpfsBackend(dir, { workerUrl }), (err) => {
    assert.ok(isCode("E_IO")(err), String(err));
    const message = (err as Error).message;
    assert.ok(message.includes(workerUrl.href), message);
    assert.ok(message.includes("dist/browser/opfs_worker.js"), message);
    assert.ok(message.includes("workerUrl"), message);
    return true;
  });
});

test("opfs: a worker script that loads but never answers (not the OPFS worker) fails open with E_IO naming its URL", async () => {
  const dir = `cairn-test/test-${crypto.randomUUID()}`;
  // An app's own bundle named as the worker: it loads, and answers nothing. Waited for for good
  // before.
  for (const script of ["", "self.onmessage = () => {};", "self.close();"]) {
    const workerUrl = URL.createObjectURL(new Blob([script], { type: "text/javascript" }));
    try {
      await assert.rejects(openOpfsBackend(dir, { workerUrl, startTimeoutMs: 300 }), (err) => {
        assert.ok(isCode("E_IO")(err), String(err));
        const message = (err as Error).message;
        assert.ok(message.includes(workerUrl) && message.includes("not the OPFS worker"), message);
        assert.ok(message.includes("dist/browser/opfs_worker.js"), message);
        return true;
      });
    } finally {
      URL.revokeObjectURL(workerUrl);
    }
  }
});

test("opfs: Cairn.open passes workerUrl down: a database opens with the worker file named", async () => {
  const path = `cairn-test/test-${crypto.randomUUID()}`;
  // build/opfs_worker.js, the file the package ships as dist/browser/opfs_worker.js.
  const workerUrl = new URL("/build/opfs_worker.js", location.href);
  const db = await Cairn.open({ path, workerUrl });
  try {
    const repo = await db.open("/notes");
    repo.create(Note, { title: "by the named worker" }, { key: "a" });
    await repo.flush();
  } finally {
    await db.close();
  }
  const again = await Cairn.open({ path, workerUrl: workerUrl.href });
  try {
    const repo = await again.open("/notes");
    assert.equal(repo.get("a", Note)?.get("title"), "by the named worker");
  } finally {
    await again.close();
    await removeDirectory(path);
  }
});

test("opfs: Cairn.open with a workerUrl that cannot load fails with E_IO naming the URL", async () => {
  const path = `cairn-test/test-${crypto.randomUUID()}`;
  await assert.rejects(
    Cairn.open({ path, workerUrl: "/no-such-dir/worker.js" }),
    (err) => isCode("E_IO")(err) && (err as Error).message.includes("/no-such-dir/worker.js"),
  );
});

test("opfs: by default the worker starts from a Blob URL (inlined), not a file next to the bundle", async () => {
  // The browser test bundle is built like the package: the worker travels inside it.
  const url = String(opfsWorkerUrl());
  assert.ok(url.startsWith("blob:"), url);
  const dir = `cairn-test/test-${crypto.randomUUID()}`;
  const backend = await openOpfsBackend(dir);
  await backend.close();
  await removeDirectory(dir);
});
