/**
 * Helpers for tests that run several Cairn databases ("peers") against one repository path and
 * sync them by hand: opening peers that trust each other, exchanging blocks, syncing until
 * quiescent, comparing what each peer holds, and taking encoded block frames apart (to tamper
 * with them or re-sign them).
 *
 * Uses only the public API ("cairndb"), so on Node it exercises the built package.
 */
import * as ed from "@noble/ed25519";
import {
  type AnySchema,
  Cairn,
  defineSchema,
  type ImportReport,
  type RepositoryHandle,
} from "cairndb";

export interface Peer {
  readonly name: string;
  readonly db: Cairn;
  readonly repo: RepositoryHandle;
}

export interface PeerOptions {
  /** Trusted mode: no signing or verification. */
  readonly trusted?: boolean;
  readonly schemas?: readonly AnySchema[];
  readonly path?: string;
}

/** Opens `count` databases on one repository path; in signed mode each trusts all the others. */
export async function openPeers(count: number, options: PeerOptions = {}): Promise<Peer[]> {
  const path = options.path ?? "/data/items";
  const peers: Peer[] = [];
  for (let i = 0; i < count; i++) {
    const db = await Cairn.open({ trusted: options.trusted, schemas: options.schemas });
    peers.push({ name: `p${i}`, db, repo: await db.open(path) });
  }
  if (!options.trusted) {
    for (const peer of peers) {
      for (const other of peers) {
        if (other !== peer) await peer.db.trust(other.db.session.publicKey);
      }
    }
  }
  return peers;
}

export async function closePeers(peers: readonly Peer[]): Promise<void> {
  await Promise.all(peers.map((peer) => peer.db.close()));
}

/** What `to` lacks of what `from` holds, imported in the order `from` exports it. */
export async function exchange(from: Peer, to: Peer): Promise<ImportReport> {
  const frames = await from.repo.exportBlocks(to.repo.versionVector());
  return await to.repo.importBlocks(frames);
}

/**
 * Exchanges between every ordered pair of peers until a whole round applies nothing. Every
 * in-order import must be clean: a rejection here is an engine bug, so it throws.
 */
export async function syncAll(peers: readonly Peer[], maxRounds = 20): Promise<number> {
  for (let round = 1; round <= maxRounds; round++) {
    let applied = 0;
    for (const from of peers) {
      for (const to of peers) {
        if (from === to) continue;
        const report = await exchange(from, to);
        assertClean(report, `${from.name} → ${to.name}`);
        applied += report.applied;
      }
    }
    if (applied === 0) return round;
  }
  throw new Error(`peers still exchanging blocks after ${maxRounds} rounds`);
}

/** Throws when an import report has rejections, naming their codes. */
export function assertClean(report: ImportReport, where: string): void {
  if (report.rejected.length === 0) return;
  const reasons = report.rejected.map((r) => `#${r.index} ${r.error.code}: ${r.error.message}`);
  throw new Error(`${where}: in-order import rejected blocks:\n  ${reasons.join("\n  ")}`);
}

const Tick = defineSchema({ ns: "peers-tick", version: 1, fields: { n: { type: "number" } } });
let ticks = 0;

/**
 * Makes `later`'s clock read after everything `earlier` has written so far, without `later`
 * learning anything of the repositories under test: `earlier` writes into a side repository and
 * `later` imports that block, which moves its hybrid logical clock past `earlier`'s. So a write
 * `later` makes next carries a greater stamp than any write `earlier` made before — the way to
 * know, in a test, which of two concurrent writes is the "last writer".
 */
export async function clockAfter(later: Peer, earlier: Peer): Promise<void> {
  const from = await earlier.db.open("/peers/clock");
  const to = await later.db.open("/peers/clock");
  from.create(Tick, { n: ++ticks }, { key: `tick-${ticks}` });
  assertClean(await to.importBlocks(await from.exportBlocks(to.versionVector())), "clock");
}

// ── comparing state ─────────────────────────────────────────────────────────────────────────

/**
 * A typed value as plain, order-independent data that `assert.deepEqual` compares properly:
 * Dates by time, Sets as sorted element lists, Maps as sorted entry lists, objects by sorted key.
 */
export function plain(value: unknown): unknown {
  if (value instanceof Date) return { date: value.getTime() };
  if (value instanceof Set) return { set: [...value].map(plain).sort(byJson) };
  if (value instanceof Map) {
    return { map: [...value].map(([k, v]) => [plain(k), plain(v)]).sort(byJson) };
  }
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      out[key] = plain((value as Record<string, unknown>)[key]);
    }
    return out;
  }
  return value;
}

function byJson(a: unknown, b: unknown): number {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export interface RepoSnapshot {
  readonly count: number;
  readonly keys: string[];
  /** Per key that has commits (live or deleted): sorted leaf ids. */
  readonly leaves: Record<string, string[]>;
  /** Per live key: its value as plain data. */
  readonly values: Record<string, unknown>;
}

/**
 * Everything a peer holds of the given keys, as plain data. `schema` reads values (the item's
 * newest registered version when omitted). Also checks that the repository agrees with itself:
 * `count()` equals the number of `keys()`, and `get(field)` matches `toObject()`.
 */
export function snapshot(
  repo: RepositoryHandle,
  keyPool: readonly string[],
  schema?: AnySchema,
): RepoSnapshot {
  const keys = [...repo.keys()].sort();
  if (repo.count() !== keys.length) {
    throw new Error(`count() is ${repo.count()} but keys() yields ${keys.length}`);
  }
  const leaves: Record<string, string[]> = {};
  const values: Record<string, unknown> = {};
  for (const key of new Set([...keyPool, ...keys])) {
    const ids = [...repo.leaves(key)].sort();
    if (ids.length > 0) leaves[key] = ids;
    if (repo.has(key) !== keys.includes(key)) throw new Error(`has(${key}) disagrees with keys()`);
    const item = repo.get(key, schema);
    if (!item) continue;
    const object = item.toObject();
    for (const field of item.schema.fieldNames) {
      const one = JSON.stringify(plain(item.get(field)));
      const all = JSON.stringify(plain(object[field]));
      if (one !== all) throw new Error(`${key}.${field}: get() gives ${one}, toObject() ${all}`);
    }
    values[key] = plain(object);
  }
  return { count: repo.count(), keys, leaves, values };
}

// ── fuzz settings ───────────────────────────────────────────────────────────────────────────

/** An environment variable, where the runtime has one (not in the browser). */
export function envVar(name: string): string | undefined {
  try {
    const g = globalThis as {
      process?: { env?: Record<string, string | undefined> };
      Deno?: { env: { get(name: string): string | undefined } };
    };
    return g.process?.env?.[name] ?? g.Deno?.env.get(name);
  } catch {
    return undefined;
  }
}

/** A non-negative integer from the environment, or undefined when unset or not one. */
export function envInteger(name: string): number | undefined {
  const text = envVar(name);
  if (text === undefined || !/^\d+$/.test(text.trim())) return undefined;
  return Number(text.trim());
}

// ── block frames ────────────────────────────────────────────────────────────────────────────

/**
 * An encoded block is a MessagePack array `[body: bin, signature: bin]`. These take it apart and
 * put it back together, so tests can change body bytes or replace the signature.
 */
export interface FrameParts {
  readonly body: Uint8Array;
  readonly signature: Uint8Array;
}

export function splitFrame(frame: Uint8Array): FrameParts {
  if (frame[0] !== 0x92) throw new Error("frame: expected a 2-element MessagePack array");
  const body = readBin(frame, 1);
  const signature = readBin(frame, body.next);
  if (signature.next !== frame.length) throw new Error("frame: trailing bytes");
  return { body: body.bytes, signature: signature.bytes };
}

export function joinFrame(parts: FrameParts): Uint8Array {
  const bodyHead = [0x92, ...binHeader(parts.body.length)];
  const sigHead = binHeader(parts.signature.length);
  const bytes = new Uint8Array(
    bodyHead.length + parts.body.length + sigHead.length + parts.signature.length,
  );
  let at = 0;
  for (const chunk of [bodyHead, parts.body, sigHead, parts.signature]) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}

function readBin(bytes: Uint8Array, at: number): { bytes: Uint8Array; next: number } {
  const tag = bytes[at];
  let length: number;
  let start: number;
  if (tag === 0xc4) {
    length = bytes[at + 1];
    start = at + 2;
  } else if (tag === 0xc5) {
    length = (bytes[at + 1] << 8) | bytes[at + 2];
    start = at + 3;
  } else if (tag === 0xc6) {
    length = ((bytes[at + 1] << 24) >>> 0) + (bytes[at + 2] << 16) + (bytes[at + 3] << 8) +
      bytes[at + 4];
    start = at + 5;
  } else throw new Error(`frame: expected a bin at byte ${at}, found 0x${tag?.toString(16)}`);
  return { bytes: copyBytes(bytes.subarray(start, start + length)), next: start + length };
}

function binHeader(length: number): number[] {
  if (length < 0x100) return [0xc4, length];
  if (length < 0x10000) return [0xc5, length >> 8, length & 0xff];
  return [0xc6, (length >>> 24) & 0xff, (length >> 16) & 0xff, (length >> 8) & 0xff, length & 0xff];
}

/**
 * A copy of `bytes` as a plain Uint8Array. Not `bytes.slice()`: frames are Node Buffers on Deno
 * and Node, and `Buffer#slice` returns a view of the same memory, not a copy.
 */
export function copyBytes(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes);
}

/** Where `needle` first occurs in `haystack`, or -1. */
export function indexOfBytes(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** UTF-8 bytes of a string. */
export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** Decodes base64url (no padding), as `db.session.publicKey` is written. */
export function fromBase64Url(text: string): Uint8Array {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(base64 + "=".repeat((4 - base64.length % 4) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** An Ed25519 signature of `data` with a 32-byte secret (as `db.exportSecretKey()` gives). */
export async function signWith(secret: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  return await ed.signAsync(data, secret);
}

// ── uncaught errors ─────────────────────────────────────────────────────────────────────────

/**
 * Runs `fn` and collects the errors thrown asynchronously (uncaught) while it runs and until the
 * next macrotask, instead of letting them fail the test run. Cairn reports an exception thrown
 * by a change listener that way, so tests of it need this. Deno, Node and browsers each have
 * their own hook.
 */
/** The errors captureUncaught took, which the Deno run's guard (uncaught_guard.ts) lets pass. */
function captured(): WeakSet<object> {
  const key = Symbol.for("cairn.test.captured");
  const global = globalThis as unknown as Record<symbol, WeakSet<object>>;
  return global[key] ??= new WeakSet();
}

export async function captureUncaught(fn: () => void | Promise<void>): Promise<unknown[]> {
  const caught: unknown[] = [];
  const g = globalThis as unknown as {
    Deno?: unknown;
    process?: {
      listeners(event: string): ((err: unknown) => void)[];
      removeAllListeners(event: string): void;
      on(event: string, listener: (err: unknown) => void): void;
    };
    addEventListener?: (type: string, listener: (event: ErrorEvent) => void) => void;
    removeEventListener?: (type: string, listener: (event: ErrorEvent) => void) => void;
  };
  let restore: () => void;
  if (g.Deno === undefined && typeof g.process?.listeners === "function") {
    // Node: take the test runner's handler off while our error goes by.
    const process = g.process;
    const saved = process.listeners("uncaughtException");
    process.removeAllListeners("uncaughtException");
    process.on("uncaughtException", (err) => caught.push(err));
    restore = () => {
      process.removeAllListeners("uncaughtException");
      for (const listener of saved) process.on("uncaughtException", listener);
    };
  } else {
    // Deno and browsers: an "error" event on the global scope, cancelable.
    const listener = (event: ErrorEvent) => {
      caught.push(event.error);
      if (typeof event.error === "object" && event.error !== null) captured().add(event.error);
      event.preventDefault();
    };
    g.addEventListener!("error", listener);
    restore = () => g.removeEventListener!("error", listener);
  }
  try {
    await fn();
    await new Promise((resolve) => setTimeout(resolve, 0));
  } finally {
    restore();
  }
  return caught;
}
