/**
 * The few file operations a database directory needs, behind one interface. Implementations:
 * backends/fs.ts (Deno and Node, through node:fs) and backends/opfs.ts (the browser: a dedicated
 * worker owns OPFS sync access handles).
 *
 * File names are flat names inside the database directory (no slashes).
 */

export interface StorageBackend {
  readonly kind: "fs" | "opfs";
  /** The whole file, or undefined when it does not exist. Decoded whole: settings, checkpoints. */
  readFile(name: string): Promise<Uint8Array | undefined>;
  /**
   * Up to `length` bytes of the file from `offset` (fewer where the file ends), with the file's
   * size, or undefined when it does not exist. How a file larger than one read (a long log) is
   * read: in pieces (see storage/byte_source.ts).
   */
  readRange(name: string, offset: number, length: number): Promise<FileRange | undefined>;
  /** Opens (creating if missing) a file for appending. One open handle per file at a time. */
  openAppend(name: string): Promise<AppendFile>;
  /** Replaces a file atomically: written to a temporary file, flushed, then renamed over it. */
  writeFileAtomic(name: string, bytes: Uint8Array): Promise<void>;
  removeFile(name: string): Promise<void>;
  listFiles(): Promise<string[]>;
  /**
   * Takes the directory's writer lock: an OS lock on a file that the kernel drops when the
   * process dies (fs), a Web Lock (browser). Throws CairnError E_LOCKED when another process or
   * tab holds it.
   */
  acquireLock(): Promise<void>;
  releaseLock(): Promise<void>;
  /** Releases the lock and everything the backend holds (files, a worker). Later calls fail. */
  close(): Promise<void>;
  /**
   * Set once the backend can do nothing more, by a failure no retry mends (its OPFS worker
   * ended): what every call fails with from then on. Undefined while it works, or has only
   * failed calls that may succeed again (a full disk).
   */
  readonly lost?: Error;
  /** Calls `listener` once, when the backend becomes `lost`. */
  onLost?(listener: (error: Error) => void): void;
}

export interface FileRange {
  /** The bytes read, in a buffer of their own. */
  readonly bytes: Uint8Array;
  /** The whole file's size when they were read. */
  readonly size: number;
}

export interface AppendFile {
  /** Current size in bytes. */
  readonly size: number;
  /** Appends bytes at the end. Resolves when the bytes are handed to the OS (not yet durable). */
  append(bytes: Uint8Array): Promise<void>;
  /** Makes everything appended so far durable (fsync / OPFS flush). */
  sync(): Promise<void>;
  /** Cuts the file to `size` bytes (used to drop a torn tail before appending). */
  truncate(size: number): Promise<void>;
  close(): Promise<void>;
}
