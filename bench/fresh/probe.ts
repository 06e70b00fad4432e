/**
 * A fresh process answering one request (bench/fresh/protocol.ts), given as its one JSON
 * argument: the figure of a first open, or the memory a database holds, with nothing else having
 * run in the process. Deno runs this file, Node its bundle (build/bench/fresh_probe.mjs).
 */
import process from "node:process";
import { Cairn } from "../../src/mod.ts";
import { ItemSchema, openOptions, REPO_PATH } from "../contenders/cairn.ts";
import { nativeEngine } from "../contenders/sqlite_native.ts";
import { itemKey, sink } from "../lib/items.ts";
import { SELECT_TITLE } from "../lib/sql.ts";
import { type FreshReply, type FreshRequest, type MemoryPoint, REPLY_PREFIX } from "./protocol.ts";

const SELECT_EVERY_VALUE = "SELECT id, title, count, tags FROM items";

/** Heap (JS objects plus ArrayBuffer contents) and RSS, after a full GC. */
function usage(): MemoryPoint {
  (globalThis as { gc?: () => void }).gc?.();
  const { heapUsed, external, rss } = process.memoryUsage();
  return { heap: heapUsed + external, rss };
}

function above(point: MemoryPoint, base: MemoryPoint): MemoryPoint {
  return { heap: point.heap - base.heap, rss: point.rss - base.rss };
}

async function cairn(task: FreshRequest["task"], contender: string, location: string) {
  const before = usage();
  const start = performance.now();
  const db = await Cairn.open(openOptions(contender, location) as never);
  const repo = await db.open(REPO_PATH);
  if (task === "open") {
    sink.value += repo.get(itemKey(0), ItemSchema)!.get("title").length;
    const ms = performance.now() - start;
    await db.close();
    return { ms };
  }
  const afterOpen = above(usage(), before);
  for (const key of repo.keys()) {
    const item = repo.get(key, ItemSchema)!;
    sink.value += item.get("title").length + item.get("count") + (item.get("tags")?.size ?? 0);
  }
  const afterRead = above(usage(), before);
  await db.close();
  return { afterOpen, afterRead };
}

function sqlite(task: FreshRequest["task"], engineId: string, dir: string, name: string) {
  const engine = nativeEngine(engineId, dir);
  const before = usage();
  const start = performance.now();
  const db = engine.open(name);
  if (task === "open") {
    const select = db.prepare(SELECT_TITLE);
    sink.value += String(select.get(itemKey(0))!.title).length;
    const ms = performance.now() - start;
    select.finalize();
    db.close();
    return { ms };
  }
  const scan = db.prepare(SELECT_EVERY_VALUE);
  const afterOpen = above(usage(), before);
  scan.each([], (row) => {
    sink.value += String(row.title).length + Number(row.count) + String(row.tags).length;
  });
  const afterRead = above(usage(), before);
  scan.finalize();
  db.close();
  return { afterOpen, afterRead };
}

const request: FreshRequest = JSON.parse(process.argv[process.argv.length - 1]);
const reply: FreshReply = request.side === "cairn"
  ? await cairn(request.task, request.contender, request.location)
  : sqlite(request.task, request.engine, request.dir, request.name);
process.stdout.write(`${REPLY_PREFIX}${JSON.stringify(reply)}\n`);
