// Driven by scripts/lib/browser_storage_pages.ts: an app that imports "cairndb" by name, bundled
// by esbuild with no other step (nothing copied next to the bundle), keeps an OPFS database
// across a reload. Phase "write" stores items and leaves the database open; phase "read", loaded
// into the same tab, reopens it and must find them. The outcome goes to
// document.body.dataset.status ("ok" or "failed") and #out.
import { Cairn, defineSchema } from "cairndb";

const Task = defineSchema({
  ns: "bundled-task",
  version: 1,
  fields: { title: { type: "string", required: true }, done: { type: "boolean" } },
});
const ITEMS = 50;

const params = new URL(location.href).searchParams;
const phase = params.get("phase");
const path = params.get("db") ?? "";

function report(status: string, message: string): void {
  document.getElementById("out")!.textContent = `${status}: ${message}`;
  document.body.dataset.status = status;
}

async function write(): Promise<string> {
  const db = await Cairn.open({ path, durability: "durable" });
  // Kept reachable on purpose: the database stays open until the tab navigates away.
  (globalThis as { cairnDatabase?: Cairn }).cairnDatabase = db;
  const repo = await db.open("/tasks");
  for (let i = 0; i < ITEMS; i++) {
    repo.create(Task, { title: `task ${i}`, done: i % 2 === 0 }, { key: `t${i}` });
  }
  await repo.flush();
  return `wrote ${ITEMS} tasks`;
}

async function read(): Promise<string> {
  const db = await Cairn.open({ path });
  try {
    const repo = await db.open("/tasks");
    const titles = [...repo.keys()].map((key) => repo.get(key, Task)?.get("title")).sort();
    const expected = Array.from({ length: ITEMS }, (_, i) => `task ${i}`).sort();
    if (JSON.stringify(titles) !== JSON.stringify(expected)) {
      throw new Error(`after the reload: ${JSON.stringify(titles)}`);
    }
    return `read ${titles.length} tasks back after the reload`;
  } finally {
    await db.close();
    await (await navigator.storage.getDirectory()).removeEntry(path, { recursive: true });
  }
}

try {
  if (!/^[\w-]+$/.test(path)) throw new Error(`db must be a plain directory name, got "${path}"`);
  if (phase === "write") report("ok", await write());
  else if (phase === "read") report("ok", await read());
  else throw new Error(`unknown phase "${phase}"`);
} catch (err) {
  report("failed", err instanceof Error ? `${err.message}\n${err.stack}` : String(err));
}
