/**
 * The bench page. Driven by the runner (`deno task bench`) it starts by itself and reports every
 * message through `__benchEmit`; opened by a person (`deno task bench:serve`) it has a Run button
 * and shows the tables. Cairn runs on this page's main thread; SQLite WASM in a worker on OPFS.
 */
import { renderRuntimeTable } from "../../bench/report/console_table.ts";
import type { RuntimeResult } from "../../bench/lib/envelope.ts";
import { type Platform, runSuite } from "../../bench/entry/suite.ts";
import type { Message, Settings } from "../../bench/lib/types.ts";
import { SqliteWorker } from "./worker_client.ts";

interface Driver {
  __benchEmit?: (message: Message) => Promise<void>;
  __benchHeap?: () => Promise<number>;
}

const driver = globalThis as unknown as Driver;
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

function chromeVersion(): string {
  return navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1] ?? navigator.userAgent;
}

async function heapBytes(): Promise<number | undefined> {
  if (driver.__benchHeap) return await driver.__benchHeap();
  // Without the runner there is no GC to force: Chromium's coarse figure, or none.
  const memory = (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory;
  return memory?.usedJSHeapSize;
}

/** Bytes of all files in an OPFS directory such as "cairn-bench/x-1". */
async function storedBytes(location: string): Promise<number> {
  let dir = await navigator.storage.getDirectory();
  for (const part of location.split("/")) dir = await dir.getDirectoryHandle(part);
  let sum = 0;
  const entries = dir as unknown as { values(): AsyncIterable<FileSystemHandle> };
  for await (const handle of entries.values()) {
    if (handle.kind === "file") sum += (await (handle as FileSystemFileHandle).getFile()).size;
  }
  return sum;
}

let locations = 0;

function platform(worker: SqliteWorker, wasmVersion: string): Platform {
  return {
    runtime: "browser",
    version: chromeVersion(),
    engine: "Chromium",
    sqliteVersions: () => Promise.resolve({ wasm: wasmVersion }),
    storageLocation: () => `cairn-bench/${Date.now().toString(36)}-${++locations}`,
    heapBytes,
    storedBytes,
    gc() {},
    runSqlite: (_contender, workload, variant, plan, progress) =>
      worker.run(workload.id, variant, plan, progress),
  };
}

function show(result: RuntimeResult): void {
  $("tables").textContent = renderRuntimeTable("browser", result);
}

async function run(settings: Settings): Promise<void> {
  const button = $<HTMLButtonElement>("run");
  button.disabled = true;
  const result: RuntimeResult = { rows: [], ms: 0 };
  const started = performance.now();
  const emit = (message: Message) => {
    driver.__benchEmit?.(message);
    if (message.type === "info") result.info = message.info;
    if (message.type === "row") {
      result.rows.push(message.row);
      show(result);
    }
    if (message.type === "progress") {
      $("progress").textContent =
        `${message.workload} · ${message.variant} · ${message.contender} · ${message.phase} ${message.i}/${message.n}`;
    }
  };
  try {
    const worker = new SqliteWorker();
    const wasmVersion = await worker.init();
    await runSuite(settings, platform(worker, wasmVersion), emit);
    result.ms = performance.now() - started;
    $("progress").textContent = `done in ${(result.ms / 1000).toFixed(1)} s`;
    show(result);
    offerDownload(result);
  } catch (err) {
    const error = String((err as Error)?.stack ?? err);
    $("progress").textContent = `failed: ${error}`;
    emit({ type: "fatal", error });
  } finally {
    button.disabled = false;
  }
}

function offerDownload(result: RuntimeResult): void {
  const link = $<HTMLAnchorElement>("download");
  link.href = URL.createObjectURL(
    new Blob([JSON.stringify(result, null, 1)], { type: "application/json" }),
  );
  link.hidden = false;
}

function settingsFromForm(): Settings {
  return {
    quick: $<HTMLInputElement>("quick").checked,
    filter: $<HTMLInputElement>("filter").value.trim(),
  };
}

const params = new URL(location.href).searchParams;
$<HTMLInputElement>("quick").checked = params.has("quick");
$<HTMLInputElement>("filter").value = params.get("filter") ?? "";
$("run").addEventListener("click", () => run(settingsFromForm()));
if (params.has("auto")) run(settingsFromForm());
