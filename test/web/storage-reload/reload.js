// Driven by scripts/lib/browser_storage_pages.ts. Phase "write" fills an OPFS database, records
// what it wrote in sessionStorage (which survives navigation within the tab) and keeps the
// database open. Phase "read", loaded into the same tab, must be able to open the same path (the
// reload ended the old document's OPFS worker and its Web Lock) and find the same values, session
// and index. The outcome goes to document.body.dataset.status ("ok" or "failed") and #out.
import { Cairn, defineSchema } from "../../../dist/browser/cairn.js";

const Entry = defineSchema({
  ns: "reload-entry",
  version: 1,
  fields: {
    title: { type: "string", required: true },
    rank: { type: "number" },
    done: { type: "boolean" },
    due: { type: "date" },
    tags: { type: "set" },
    attrs: { type: "map" },
    body: { type: "text" },
    votes: { type: "counter" },
  },
});
const ITEMS = 300;
const REPOSITORY = "/entries";

const params = new URL(location.href).searchParams;
const phase = params.get("phase");
const db = params.get("db") ?? "";
const recordKey = `cairn-storage-reload:${db}`;

function report(status, message) {
  document.getElementById("out").textContent = `${status}: ${message}`;
  document.body.dataset.status = status;
}

/** One line per item in key order, each field in name order, with typed values made plain. */
function snapshot(repo) {
  return [...repo.keys()].sort().map((key) => {
    const values = repo.get(key, Entry).toObject();
    const fields = Object.keys(values).sort().filter((name) => values[name] !== undefined)
      .map((name) => [name, plain(values[name])]);
    return JSON.stringify([key, fields]);
  });
}

function plain(value) {
  if (value instanceof Set) return { set: [...value].sort() };
  if (value instanceof Map) {
    return { map: [...value].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) };
  }
  if (value instanceof Date) return { date: value.getTime() };
  return value;
}

async function write() {
  sessionStorage.removeItem(recordKey);
  const database = await Cairn.open({ path: db, durability: "durable" });
  // Kept reachable on purpose: the database stays open until the tab navigates away.
  globalThis.cairnDatabase = database;
  const repo = await database.open(REPOSITORY);
  for (let i = 0; i < ITEMS; i++) {
    const item = repo.create(Entry, {
      title: `entry ${i} ✓`,
      rank: i % 7 === 0 ? -i / 8 : i * 1.5,
      done: i % 3 === 0,
      due: new Date(Date.UTC(2024, i % 12, 1 + (i % 28), i % 24)),
      tags: new Set([`t${i % 5}`, `g${i % 2}`]),
      attrs: new Map([["size", i], ["colour", i % 2 ? "red" : "blue"], ["none", null]]),
      votes: i % 4,
    }, { key: `e${String(i).padStart(4, "0")}` });
    if (i % 5 === 0) item.set("body", `notes for entry ${i}\nsecond line`);
    if (i % 6 === 0) item.update({ done: !item.get("done"), rank: i });
    if (i % 11 === 0) item.delete();
  }
  repo.createIndex("rank"); // must be back after the reload
  await repo.flush();
  const lines = snapshot(repo);
  const held = (await navigator.locks.query()).held.some((lock) =>
    lock.name === `cairn:opfs:${db}`
  );
  if (!held) throw new Error(`the Web Lock "cairn:opfs:${db}" is not held after opening`);
  sessionStorage.setItem(recordKey, JSON.stringify({ session: database.session.id, lines }));
  report("ok", `wrote ${lines.length} items as session ${database.session.id}; database left open`);
}

async function read() {
  const recorded = sessionStorage.getItem(recordKey);
  if (recorded === null) throw new Error("nothing recorded by the write phase in this tab");
  sessionStorage.removeItem(recordKey);
  const expected = JSON.parse(recorded);
  const database = await Cairn.open({ path: db, durability: "durable" });
  try {
    if (database.session.id !== expected.session) {
      throw new Error(`session ${database.session.id} after reload, ${expected.session} before`);
    }
    const repo = await database.open(REPOSITORY);
    const stats = repo.stats();
    if (stats.damaged.length || stats.tornTailBytes || stats.unloadable.length) {
      throw new Error(`the log did not load cleanly: ${JSON.stringify(stats)}`);
    }
    const lines = snapshot(repo);
    const differs = lines.findIndex((line, i) => line !== expected.lines[i]);
    if (differs !== -1 || lines.length !== expected.lines.length) {
      const at = differs === -1 ? Math.min(lines.length, expected.lines.length) : differs;
      throw new Error(
        `values differ after reload (${lines.length} items, ${expected.lines.length} written); ` +
          `first difference at item ${at}:\n  read    ${lines[at] ?? "(none)"}\n` +
          `  written ${expected.lines[at] ?? "(none)"}`,
      );
    }
    const ranked = repo.query({ schema: Entry, where: { rank: { gte: 400 } } });
    if (ranked.explain().index !== "rank") {
      throw new Error(`the index on rank did not survive: ${JSON.stringify(ranked.explain())}`);
    }
    return `reopened after reload: ${lines.length} items, session ${expected.session}, index`;
  } finally {
    await database.close();
  }
}

async function removeDatabase() {
  const root = await navigator.storage.getDirectory();
  await root.removeEntry(db, { recursive: true });
}

async function main() {
  if (!/^[\w-]+$/.test(db)) throw new Error(`db must be a plain directory name, got "${db}"`);
  if (phase === "write") await write();
  else if (phase === "read") {
    let message, failure;
    try {
      message = await read();
    } catch (err) {
      failure = err;
    }
    await removeDatabase().catch((err) => (failure ??= err));
    if (failure) throw failure;
    report("ok", message);
  } else throw new Error(`unknown phase "${phase}"`);
}

main().catch((err) => report("failed", err?.stack ?? String(err)));
