/**
 * The context a text row's side gets, whichever engine it runs on: the engine of its contender
 * (Cairn signed or trusted, Yjs, Automerge), the trace files, and the platform's memory figures.
 */
import type { Feature } from "../lib/types.ts";
import type { SyncHost } from "../sync/host.ts";
import { type CairnPlatform, openOptions } from "./cairn.ts";
import { cairnTextEngine } from "./text_cairn.ts";
import { automergeEngine } from "./text_automerge.ts";
import type { TextEngine } from "./text_engine.ts";
import { yjsEngine } from "./text_yjs.ts";

/** The contenders of the text rows; Cairn's figures are compared with Yjs's, then Automerge's. */
export const TEXT_CONTENDERS = ["cairn", "cairn-trusted", "yjs", "automerge"] as const;
export const TEXT_BASELINES = ["yjs", "automerge"] as const;

export interface TextCtx {
  contender: string;
  features: Record<Feature, boolean>;
  /** A fresh engine: its replicas start new documents. */
  engine(): TextEngine;
  /** Whether the heap figures see the engine's documents (not Automerge's WebAssembly memory). */
  heapVisible: boolean;
  /** A file of bench/data/. */
  readData(file: string): Promise<Uint8Array>;
  /** A new storage location (a directory, or an OPFS name) for a database a row opens itself. */
  storageLocation(): string;
  /** JS heap plus ArrayBuffer memory in use, after a full GC where the runtime allows. */
  heapBytes(): Promise<number | undefined>;
  gc(): void;
  /**
   * Processes for the sync rows (S01–S04), which share this context; absent in a bench page
   * that the runner does not drive.
   */
  syncHost?: SyncHost;
}

export interface TextPlatform extends CairnPlatform {
  /** A file of bench/data/. */
  readData(file: string): Promise<Uint8Array>;
  /** Starts the sync rows' server and client processes (the bench page: through the runner). */
  syncHost?: SyncHost;
}

export function textCtx(
  contender: string,
  features: Record<Feature, boolean>,
  platform: TextPlatform,
): TextCtx {
  const engine = (): TextEngine => {
    switch (contender) {
      case "yjs":
        return yjsEngine();
      case "automerge":
        return automergeEngine();
      default:
        return cairnTextEngine({
          openOptions: (location) => openOptions(contender, location),
          newLocation: () => features.storage ? platform.storageLocation() : undefined,
          fileSizes: (location) => platform.fileSizes(location),
        });
    }
  };
  return {
    contender,
    features,
    engine,
    heapVisible: contender !== "automerge",
    readData: (file) => platform.readData(file),
    storageLocation: () => platform.storageLocation(),
    heapBytes: () => platform.heapBytes(),
    gc: () => platform.gc(),
    syncHost: platform.syncHost,
  };
}
