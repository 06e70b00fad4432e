/**
 * writeFileAtomic in a browser without FileSystemHandle.move(): the temporary file is copied over
 * the target, announced by a marker file, and whoever takes the directory's lock next finishes an
 * interrupted copy. Run against the real worker script with move() deleted before it starts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { isCairnError } from "cairndb";
import { openOpfsBackend, type OpfsBackend } from "../../src/storage/backends/opfs.ts";
import { opfsWorkerUrl } from "../../src/storage/backends/opfs_worker_url.ts";
import { seededRandom } from "../harness/random.ts";

/** Cairn's worker script, run where FileSystemHandle.move() does not exist. */
async function workerWithoutMove(): Promise<string> {
  const source = await (await fetch(opfsWorkerUrl())).text();
  const prelude = "delete FileSystemHandle.prototype.move;\n" +
    "delete FileSystemFileHandle.prototype.move;\n" +
    'if ("move" in FileSystemFileHandle.prototype) throw new Error("move() is still there");\n';
  return URL.createObjectURL(new Blob([prelude + source], { type: "text/javascript" }));
}

const newDirectory = () => `cairn-test/replace-${crypto.randomUUID()}`;

async function directoryHandle(dir: string): Promise<FileSystemDirectoryHandle> {
  let handle = await navigator.storage.getDirectory();
  for (const part of dir.split("/")) {
    handle = await handle.getDirectoryHandle(part, { create: true });
  }
  return handle;
}

/** Writes files straight into the directory, as a crash would have left them. */
async function leaveFiles(dir: string, files: Record<string, string>): Promise<void> {
  const handle = await directoryHandle(dir);
  for (const [name, text] of Object.entries(files)) {
    const writable = await (await handle.getFileHandle(name, { create: true })).createWritable();
    await writable.write(text);
    await writable.close();
  }
}

async function removeDirectory(dir: string): Promise<void> {
  const [parent, name] = dir.split("/");
  const root = await navigator.storage.getDirectory();
  await (await root.getDirectoryHandle(parent)).removeEntry(name, { recursive: true });
}

/** Opens the directory and takes its lock, retrying while a killed worker's lock lingers. */
async function openLocked(dir: string, workerUrl?: string): Promise<OpfsBackend> {
  for (let attempt = 0;; attempt++) {
    const backend = await openOpfsBackend(dir, { workerUrl });
    try {
      await backend.acquireLock();
      return backend;
    } catch (err) {
      await backend.close();
      if (!isCairnError(err) || err.code !== "E_LOCKED" || attempt === 200) throw err;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/**
 * Leaves `files` in a new directory as a crash would, takes its lock with `workerUrl`'s worker,
 * and asserts that cairn.json then holds `expected` and is the only file left.
 */
async function assertLockTakenOver(
  files: Record<string, string>,
  workerUrl: string | undefined,
  expected: string,
): Promise<void> {
  const dir = newDirectory();
  await leaveFiles(dir, files);
  const backend = await openLocked(dir, workerUrl);
  try {
    assert.equal(text(await backend.readFile("cairn.json")), expected);
    assert.deepEqual(await backend.listFiles(), ["cairn.json"]);
  } finally {
    await backend.close();
    await removeDirectory(dir);
  }
}

const text = (bytes: Uint8Array | undefined) => bytes && new TextDecoder().decode(bytes);

test("opfs without move(): writeFileAtomic replaces the content and leaves no other file", async () => {
  const dir = newDirectory();
  const backend = await openLocked(dir, await workerWithoutMove());
  try {
    await backend.writeFileAtomic("cairn.json", new TextEncoder().encode("first, the longer one"));
    await backend.writeFileAtomic("cairn.json", new TextEncoder().encode("second"));
    assert.equal(text(await backend.readFile("cairn.json")), "second");
    assert.deepEqual(await backend.listFiles(), ["cairn.json"]);
  } finally {
    await backend.close();
    await removeDirectory(dir);
  }
});

for (const withMove of [false, true]) {
  const worker = withMove ? "a worker with move()" : "a worker without move()";
  test(`opfs: a copy a crash interrupted is finished when ${worker} takes the lock`, async () => {
    const left = {
      "cairn.json": '{"cairn":"da', // half-copied
      "cairn.json.tmp": '{"cairn":"database","version":1}',
      "cairn.json.cpy": "",
    };
    const worker = withMove ? undefined : await workerWithoutMove();
    await assertLockTakenOver(left, worker, '{"cairn":"database","version":1}');
  });
}

test("opfs: a temporary file without its marker is dropped and the target kept", async () => {
  // A crash before the copy began: the temporary file may be incomplete, the target is whole.
  const left = { "cairn.json": "the old, whole content", "cairn.json.tmp": "the new, ha" };
  await assertLockTakenOver(left, await workerWithoutMove(), "the old, whole content");
});

test("opfs without move(): a worker killed at random moments of a replace leaves the old content or the new", async () => {
  const seed = Date.now() % 1_000_000;
  const random = seededRandom(seed);
  const workerUrl = await workerWithoutMove();
  const dir = newDirectory();
  const started: Worker[] = [];
  const RealWorker = globalThis.Worker;
  globalThis.Worker = class extends RealWorker {
    constructor(url: string | URL, options?: WorkerOptions) {
      super(url, options);
      started.push(this);
    }
  };
  const contents = (version: number) => {
    const bytes = new Uint8Array(64 * 1024 + Math.floor(random() * 512 * 1024));
    bytes.fill(version % 251);
    new DataView(bytes.buffer).setUint32(0, version);
    return bytes;
  };
  /** The version a file holds (0: no file), or what is wrong with it. */
  const versionOf = (bytes: Uint8Array | undefined): number | string => {
    if (!bytes) return 0;
    if (bytes.length < 4) return `${bytes.length} bytes`;
    const version = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0);
    return bytes.every((b, i) => i < 4 || b === version % 251) ? version : "mixed bytes";
  };
  try {
    let acknowledged = 0;
    let attempted = 0;
    for (let round = 1; round <= 20; round++) {
      const backend = await openLocked(dir, workerUrl);
      const found = versionOf(await backend.readFile("data.bin"));
      const allowed = [acknowledged, attempted];
      assert.ok(
        allowed.includes(found as number),
        `seed ${seed}, round ${round}: found ${found}, expected ${allowed.join(" or ")}`,
      );
      acknowledged = found as number;
      attempted = round;
      const write = backend.writeFileAtomic("data.bin", contents(round));
      write.then(() => (acknowledged = Math.max(acknowledged, round)), () => {});
      await new Promise((resolve) => setTimeout(resolve, random() * 12));
      started.at(-1)!.terminate(); // the worker ends where it stands, its lock let go
    }
    const last = await openLocked(dir, workerUrl);
    assert.deepEqual(
      (await last.listFiles()).filter((name) => name !== "data.bin"),
      [],
      `seed ${seed}: files left over`,
    );
    await last.close();
  } finally {
    globalThis.Worker = RealWorker;
    await removeDirectory(dir);
  }
});
