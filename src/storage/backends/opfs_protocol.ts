/**
 * Messages between the OPFS backend (opfs.ts, any thread) and its dedicated worker
 * (opfs_worker.ts, which owns the OPFS handles). Every request carries an id; the worker handles
 * requests one at a time in the order received and answers each exactly once with the same id.
 *
 * Byte payloads travel as transferred ArrayBuffers (moved, not copied): a whole append batch in,
 * a whole file or one range of it out.
 */
import type { CairnErrorCode } from "../../core/errors.ts";

/** Every request the worker understands, keyed by `op`. */
export type Request =
  /**
   * First message: resolve (creating if missing) the OPFS directory, given as "a/b/c", and hold
   * the Web Lock `lifeLock` for the worker's whole life (the main side learns of its end by it).
   */
  | { op: "init"; directory: string; lifeLock: string }
  | { op: "readFile"; name: string }
  /** Up to `length` bytes from `offset` (fewer where the file ends). */
  | { op: "readRange"; name: string; offset: number; length: number }
  | { op: "openAppend"; name: string }
  /** One coalesced batch of appends: the first `length` bytes of `bytes`, in one write call. */
  | { op: "append"; file: number; bytes: ArrayBuffer; length: number }
  | { op: "sync"; file: number }
  | { op: "truncate"; file: number; size: number }
  | { op: "closeFile"; file: number }
  | { op: "writeFileAtomic"; name: string; bytes: ArrayBuffer }
  | { op: "removeFile"; name: string }
  | { op: "listFiles" }
  | { op: "acquireLock"; lockName: string }
  | { op: "releaseLock" }
  /** Closes every open file and releases the lock; the worker is terminated afterwards. */
  | { op: "close" };

export type Op = Request["op"];
export type RequestOf<O extends Op> = Extract<Request, { op: O }>;

/** What a successful request of each op resolves to. */
export interface Results {
  init: null;
  /** null when the file does not exist. */
  readFile: ArrayBuffer | null;
  /** null when the file does not exist; `size` is the whole file's. */
  readRange: { bytes: ArrayBuffer; size: number } | null;
  /** `file` names the open file in later requests. */
  openAppend: { file: number; size: number };
  /** The file's size after the write. */
  append: { size: number };
  sync: null;
  truncate: { size: number };
  closeFile: null;
  writeFileAtomic: null;
  removeFile: null;
  listFiles: string[];
  acquireLock: null;
  releaseLock: null;
  close: null;
}

export interface RequestMessage {
  id: number;
  request: Request;
}

/** An error as it crosses the worker boundary; the main side turns it back into a CairnError. */
export interface WireError {
  code: CairnErrorCode;
  /** The DOMException or Error name in the worker (e.g. "NoModificationAllowedError"). */
  name: string;
  message: string;
}

export type ResponseMessage =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WireError };
