/**
 * A StorageBackend that wraps a real one and fails chosen calls the way a full disk or a failing
 * device does, so tests can drive the write path through failures and recovery on real files
 * (node:fs on Deno and Node, OPFS in the browser):
 *
 * - a failing `append` writes only part of its bytes to the real file, then throws E_IO, leaving
 *   a torn record at the end of the file as a short write before ENOSPC does;
 * - a failing `sync`, `truncate`, `writeFileAtomic` or `readFile` throws E_IO and does nothing;
 *   `readFile` stands for every read, `readRange` included.
 *
 * Which calls fail is decided by a `FaultPlan`: `FailingCalls` (chosen kinds of call fail until
 * cleared, e.g. a full disk) or `RandomFaults` (a seeded choice per call, for fuzzing).
 */
import { CairnError } from "../../src/core/errors.ts";
import type { AppendFile, StorageBackend } from "../../src/storage/backend.ts";

export type FaultyCall = "append" | "sync" | "truncate" | "writeFileAtomic" | "readFile";

export interface FaultPlan {
  /** Whether this call (on the file `name`) fails. */
  fails(call: FaultyCall, name: string): boolean;
  /** For a failing append of `length` bytes: how many reach the file first (0 … length - 1). */
  partial(length: number): number;
}

/** Fails every call of the kinds in `failing`, until they are taken out. */
export class FailingCalls implements FaultPlan {
  readonly failing = new Set<FaultyCall>();

  /** A full disk: whatever needs space fails; an append writes half its bytes first. */
  diskFull(): this {
    for (const call of ["append", "sync", "writeFileAtomic"] as const) this.failing.add(call);
    return this;
  }

  /** Room again: nothing fails. */
  clear(): void {
    this.failing.clear();
  }

  fails(call: FaultyCall): boolean {
    return this.failing.has(call);
  }

  partial(length: number): number {
    return Math.floor(length / 2);
  }
}

/** Each call fails with its own probability, drawn from a seeded generator. */
export class RandomFaults implements FaultPlan {
  readonly #random: () => number;
  readonly #rates: Partial<Record<FaultyCall, number>>;
  on = true;

  constructor(random: () => number, rates: Partial<Record<FaultyCall, number>>) {
    this.#random = random;
    this.#rates = rates;
  }

  fails(call: FaultyCall): boolean {
    return this.on && this.#random() < (this.#rates[call] ?? 0);
  }

  partial(length: number): number {
    return Math.floor(this.#random() * length);
  }
}

/** What the wrapper did: how many calls it failed, per kind, and the truncates it passed on. */
export interface FaultLog {
  readonly failed: Record<FaultyCall, number>;
  /** Sizes of the truncates that reached the real file, in order. */
  readonly truncatedTo: number[];
  /** Bytes appended to the real file by whole (not failed) appends. */
  appendedBytes: number;
}

export interface FaultyBackend extends StorageBackend {
  readonly faults: FaultLog;
  /** Closes the real files this backend opened (a test's cleanup; a log may keep its file). */
  closeFiles(): Promise<void>;
}

export function faultyBackend(inner: StorageBackend, plan: FaultPlan): FaultyBackend {
  const faults: FaultLog = {
    failed: { append: 0, sync: 0, truncate: 0, writeFileAtomic: 0, readFile: 0 },
    truncatedTo: [],
    appendedBytes: 0,
  };
  const files: AppendFile[] = [];
  const fail = (call: FaultyCall, name: string): CairnError => {
    faults.failed[call]++;
    return new CairnError("E_IO", `could not ${call} ${name}: no space left on device (injected)`);
  };
  return {
    kind: inner.kind,
    faults,
    async readFile(name) {
      if (plan.fails("readFile", name)) throw fail("readFile", name);
      return await inner.readFile(name);
    },
    async readRange(name, offset, length) {
      if (plan.fails("readFile", name)) throw fail("readFile", name);
      return await inner.readRange(name, offset, length);
    },
    async openAppend(name) {
      const file = await inner.openAppend(name);
      files.push(file);
      return faultyFile(name, file, plan, faults, fail);
    },
    async writeFileAtomic(name, bytes) {
      if (plan.fails("writeFileAtomic", name)) throw fail("writeFileAtomic", name);
      await inner.writeFileAtomic(name, bytes);
    },
    removeFile: (name) => inner.removeFile(name),
    listFiles: () => inner.listFiles(),
    acquireLock: () => inner.acquireLock(),
    releaseLock: () => inner.releaseLock(),
    close: () => inner.close(),
    async closeFiles() {
      for (const file of files) await file.close().catch(() => {});
    },
  };
}

function faultyFile(
  name: string,
  file: AppendFile,
  plan: FaultPlan,
  faults: FaultLog,
  fail: (call: FaultyCall, name: string) => CairnError,
): AppendFile {
  return {
    get size() {
      return file.size;
    },
    async append(bytes) {
      if (plan.fails("append", name)) {
        const written = plan.partial(bytes.length);
        if (written > 0) await file.append(bytes.slice(0, written));
        throw fail("append", name);
      }
      await file.append(bytes);
      faults.appendedBytes += bytes.length;
    },
    async sync() {
      if (plan.fails("sync", name)) throw fail("sync", name);
      await file.sync();
    },
    async truncate(size) {
      if (plan.fails("truncate", name)) throw fail("truncate", name);
      await file.truncate(size);
      faults.truncatedTo.push(size);
    },
    close: () => file.close(),
  };
}
