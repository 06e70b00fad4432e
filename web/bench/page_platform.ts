/**
 * The Platform the suite runs on in the bench page: Chromium's version, OPFS locations and
 * sizes, heap figures (through the runner's DevTools session when it drives the page), the trace
 * files (from the server), the SQLite worker for the SQLite sides (or, for the rows that start
 * a SQLite worker inside the clock, the page itself), and, when the runner drives the page, the
 * sync rows' processes, which it starts for the page.
 */
import type { Platform } from "../../bench/entry/suite.ts";
import type { Message } from "../../bench/lib/types.ts";
import { runSide } from "../../bench/lib/measure.ts";
import { bridgedSyncHost, type BridgeFunction } from "../../bench/sync/host_bridge.ts";
import { ownPeer } from "../../bench/sync/own_peer.ts";
import { controlSocket } from "../../bench/sync/control_client.ts";
import { saveBlocksToOpfs } from "./opfs_block_file.ts";
import { type SqliteWorker, startSqliteWorker } from "./worker_client.ts";

/** What the runner (bench/drivers/browser.ts) exposes to the page when it drives it. */
export interface Driver {
  __benchEmit?: (message: Message) => Promise<void>;
  __benchHeap?: () => Promise<number>;
  __benchSync?: BridgeFunction;
}

export const driver = globalThis as unknown as Driver;

function chromeVersion(): string {
  return navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1] ?? navigator.userAgent;
}

async function heapBytes(): Promise<number | undefined> {
  if (driver.__benchHeap) return await driver.__benchHeap();
  // Without the runner there is no GC to force: Chromium's coarse figure, or none.
  const memory = (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory;
  return memory?.usedJSHeapSize;
}

/** The size of each file in an OPFS directory such as "cairn-bench/x-1". */
async function fileSizes(location: string): Promise<Record<string, number>> {
  let dir = await navigator.storage.getDirectory();
  for (const part of location.split("/")) dir = await dir.getDirectoryHandle(part);
  const sizes: Record<string, number> = {};
  const entries = dir as unknown as { values(): AsyncIterable<FileSystemHandle> };
  for await (const handle of entries.values()) {
    if (handle.kind === "file") {
      sizes[handle.name] = (await (handle as FileSystemFileHandle).getFile()).size;
    }
  }
  return sizes;
}

/** A file of bench/data/, served with the page. */
async function readData(file: string): Promise<Uint8Array> {
  const response = await fetch(`/bench/data/${file}`);
  if (!response.ok) throw new Error(`/bench/data/${file}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** Resolves once the page has drawn what changed (or at once in a hidden tab, which does not). */
function drawn(): Promise<void> {
  if (document.visibilityState === "hidden") return Promise.resolve();
  return new Promise((resolve) => {
    const fallback = setTimeout(resolve, 200);
    requestAnimationFrame(() =>
      setTimeout(() => {
        clearTimeout(fallback);
        resolve();
      }, 0)
    );
  });
}

let locations = 0;

/** A new OPFS directory for a Cairn database. */
function storageLocation(): string {
  return `cairn-bench/${Date.now().toString(36)}-${++locations}`;
}

export function pagePlatform(worker: SqliteWorker, wasmVersion: string): Platform {
  return {
    runtime: "browser",
    version: chromeVersion(),
    engine: "Chromium",
    sqliteVersions: () => Promise.resolve({ wasm: wasmVersion }),
    storageLocation,
    heapBytes,
    fileSizes,
    readData,
    gc() {},
    syncHost: driver.__benchSync && bridgedSyncHost(driver.__benchSync, {
      saveBlocks: saveBlocksToOpfs,
      ownPeer: () => ownPeer(),
      controlSocket,
      catchUpLocation: storageLocation,
    }),
    // Redrawing the charts after a row happens here, between cells, not inside the next one.
    settle: drawn,
    runSqlite: (contender, workload, variant, plan, progress) =>
      workload.sqliteInPage
        ? runSide(
          workload.sqliteInPage,
          { startWorker: () => startSqliteWorker(contender) },
          variant,
          plan,
          progress,
        )
        : worker.run(contender, workload.id, variant, plan, progress),
  };
}
