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
/** At most this many collections, this far apart, before a memory reading (see usage). */
const SETTLE_ROUNDS = 10;
const SETTLE_PAUSE_MS = 20;

/**
 * Heap (JS objects plus ArrayBuffer contents) and RSS, once full GCs free nothing more. V8 frees
 * the contents of an ArrayBuffer found dead some time after the GC that found it, off the main
 * thread; until then `external` still counts them. Read right after gc(), Node counted the log a
 * repository reads at open and drops at once (90 B/item) as held. So: collect, pause, and again
 * until `external` stops falling.
 */
async function usage(): Promise<MemoryPoint> {
  const gc = (globalThis as { gc?: () => void }).gc;
  let previous = Infinity;
  for (let round = 0; round < SETTLE_ROUNDS; round++) {
    gc?.();
    const { external } = process.memoryUsage();
    if (external >= previous) break;
    previous = external;
    await new Promise((resolve) => setTimeout(resolve, SETTLE_PAUSE_MS));
  }
  const { heapUsed, external, rss } = process.memoryUsage();
  return { heap: heapUsed + external, rss };
}

function above(point: MemoryPoint, base: MemoryPoint): MemoryPoint {
  return { heap: point.heap - base.heap, rss: point.rss - base.rss };
}

async function cairn(task: FreshRequest["task"], contender: string, location: string) {
  const before = await usage();
  const start = performance.now();
  const db = await Cairn.open(openOptions(contender, location) as never);
  const repo = await db.open(REPO_PATH);
  if (task === "open") {
    sink.value += repo.get(itemKey(0), ItemSchema)!.get("title").length;
    const ms = performance.now() - start;
    await db.close();
    return { ms };
  }
  const afterOpen = above(await usage(), before);
  for (const key of repo.keys()) {
    const item = repo.get(key, ItemSchema)!;
    sink.value += item.get("title").length + item.get("count") + (item.get("tags")?.size ?? 0);
  }
  const afterRead = above(await usage(), before);
  await db.close();
  return { afterOpen, afterRead };
}

async function sqlite(
  task: FreshRequest["task"],
  engineId: string,
  dir: string,
  name: string,
) {
  const engine = nativeEngine(engineId, dir);
  const before = await usage();
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
  const afterOpen = above(await usage(), before);
  scan.each([], (row) => {
    sink.value += String(row.title).length + Number(row.count) + String(row.tags).length;
  });
  const afterRead = above(await usage(), before);
  scan.finalize();
  db.close();
  return { afterOpen, afterRead };
}

const request: FreshRequest = JSON.parse(process.argv[process.argv.length - 1]);
const reply: FreshReply = request.side === "cairn"
  ? await cairn(request.task, request.contender, request.location)
  : await sqlite(request.task, request.engine, request.dir, request.name);
process.stdout.write(`${REPLY_PREFIX}${JSON.stringify(reply)}\n`);
