/**
 * The sync protocol's frames (docs/sync.md, "Protocol, version 1"): their types, their MessagePack
 * encoding, and a decoder for hostile bytes. Server and client both speak through this module, so
 * the two cannot drift apart.
 *
 * A frame on the wire is an array `[type, ...fields]`. Decoding checks every field's type and
 * shape; whatever does not match is a `CairnError` E_PROTOCOL (or E_TOO_LARGE for oversize
 * bytes), never another exception, so a connection can refuse it and carry on serving others.
 */
import { MIN_BLOCK_BYTES } from "../core/block.ts";
import { CairnError } from "../core/errors.ts";
import { isPlainObject } from "../core/wire_validation.ts";
import { checkRepositoryPath } from "../core/repository_path.ts";
import { MsgpackWriter, type PackableValue } from "../core/msgpack_writer.ts";
import { readMsgpack } from "../core/msgpack_reader.ts";
import { PUBLIC_KEY_BYTES, SIGNATURE_BYTES } from "../core/signing.ts";
import type { VersionVector } from "../repo/repository.ts";

/**
 * 2 since 2026-11-27: a chain's first block names its repository (core/block.ts), which a
 * version 1 peer refuses as malformed; the handshake tells the two apart first.
 */
export const PROTOCOL_VERSION = 2;
export const DEFAULT_MAX_FRAME = 1 << 20;

/** A client's place in a repository's server-assigned sequence of blocks. */
export type Cursor = readonly [epoch: string, position: number];

export type Frame =
  | {
    type: "hello";
    versions: number[];
    session: string;
    publicKey: Uint8Array;
    token: string | null;
  }
  | {
    type: "challenge";
    version: number;
    serverId: string;
    nonce: Uint8Array;
    limits: { maxFrame: number; heartbeatMs: number };
  }
  | { type: "prove"; signature: Uint8Array }
  | { type: "welcome" }
  | {
    type: "subscribe";
    repo: string;
    cursor: Cursor | null;
    versionVector: VersionVector | null;
  }
  | { type: "unsubscribe"; repo: string }
  | { type: "credit"; repo: string; bytes: number }
  | { type: "blocks"; repo: string; frames: Uint8Array[] }
  | { type: "synced"; repo: string; cursor: Cursor; versionVector: VersionVector | null }
  | { type: "push"; repo: string; id: number; frames: Uint8Array[] }
  | {
    type: "ack";
    repo: string;
    id: number;
    applied: number;
    duplicates: number;
    rejected: { index: number; code: string; message: string }[];
    position: number;
  }
  | { type: "live"; repo: string; frames: Uint8Array[]; position: number }
  | { type: "members"; repo: string; writers: Uint8Array[]; canWrite: boolean }
  | { type: "denied"; repo: string; right: "read" | "write"; code: string; message: string }
  | { type: "ping"; n: number }
  | { type: "pong"; n: number }
  | { type: "goaway"; reason: string; retryAfterMs: number }
  | { type: "error"; code: string; message: string }
  | { type: "reset"; repo: string };

export type FrameType = Frame["type"];

/** Close codes (docs/sync.md, "Close codes"). */
/**
 * The pushes a client keeps unacknowledged add up to at most this many frames of the largest size
 * (or are one push): it sends more as acks come. The server closes a client that leaves far more
 * than that unanswered (server/connection.ts).
 */
export const PUSH_WINDOW_FRAMES = 4;

export const CLOSE = {
  goingAway: 1001,
  text: 1003,
  tooLarge: 1009,
  /** The server failed (its store unreachable): nothing the client did; it connects again. */
  internal: 1011,
  protocol: 4000,
  auth: 4001,
  version: 4002,
  heartbeat: 4004,
  handshakeTimeout: 4008,
} as const;

const NONCE_BYTES = 32;
const SESSION_PATTERN = /^[A-Za-z0-9_-]{22}$/;
/** Epochs and server ids are short names; a bound keeps a hostile one from being megabytes. */
const MAX_NAME_LENGTH = 128;

/** Reused by every encodeFrame call. */
const frameWriter = new MsgpackWriter();

/** Type numbers on the wire, in the order of the spec's table (1-based). */
const TYPE_NAMES: readonly FrameType[] = [
  "hello",
  "challenge",
  "prove",
  "welcome",
  "subscribe",
  "unsubscribe",
  "credit",
  "blocks",
  "synced",
  "push",
  "ack",
  "live",
  "members",
  "denied",
  "ping",
  "pong",
  "goaway",
  "error",
  "reset",
];
const TYPE_NUMBERS = new Map(TYPE_NAMES.map((name, i) => [name, i + 1]));

export function encodeFrame(frame: Frame): Uint8Array {
  frameWriter.reset();
  frameWriter.value([TYPE_NUMBERS.get(frame.type)!, ...fieldsOf(frame)]);
  return frameWriter.take();
}

function fieldsOf(frame: Frame): PackableValue[] {
  switch (frame.type) {
    case "hello":
      return [frame.versions, frame.session, frame.publicKey, frame.token];
    case "challenge":
      return [frame.version, frame.serverId, frame.nonce, {
        maxFrame: frame.limits.maxFrame,
        heartbeatMs: frame.limits.heartbeatMs,
      }];
    case "prove":
      return [frame.signature];
    case "welcome":
      return [];
    case "subscribe":
      return [frame.repo, frame.cursor, frame.versionVector];
    case "unsubscribe":
    case "reset":
      return [frame.repo];
    case "credit":
      return [frame.repo, frame.bytes];
    case "blocks":
      return [frame.repo, frame.frames];
    case "synced":
      return [frame.repo, frame.cursor, frame.versionVector];
    case "push":
      return [frame.repo, frame.id, frame.frames];
    case "ack":
      return [
        frame.repo,
        frame.id,
        frame.applied,
        frame.duplicates,
        frame.rejected.map((r) => [r.index, r.code, r.message]),
        frame.position,
      ];
    case "live":
      return [frame.repo, frame.frames, frame.position];
    case "members":
      return [frame.repo, frame.writers, frame.canWrite];
    case "denied":
      return [frame.repo, frame.right, frame.code, frame.message];
    case "ping":
    case "pong":
      return [frame.n];
    case "goaway":
      return [frame.reason, frame.retryAfterMs];
    case "error":
      return [frame.code, frame.message];
  }
}

export function decodeFrame(bytes: Uint8Array, maxFrame: number): Frame {
  if (bytes.length > maxFrame) {
    throw new CairnError("E_TOO_LARGE", `frame of ${bytes.length} bytes; the limit is ${maxFrame}`);
  }
  let value: unknown;
  try {
    value = readMsgpack(bytes);
  } catch (err) {
    throw protocolError("frame is not MessagePack", err);
  }
  try {
    return frameFromValue(value);
  } catch (err) {
    // Field checks throw protocol errors; anything else (a path check's E_BAD_PATH) becomes one.
    if (err instanceof CairnError && err.code === "E_PROTOCOL") throw err;
    throw protocolError(err instanceof Error ? err.message : "malformed frame", err);
  }
}

function frameFromValue(value: unknown): Frame {
  if (!Array.isArray(value) || value.length === 0) {
    throw protocolError("a frame is a non-empty array");
  }
  const type = typeof value[0] === "number" ? TYPE_NAMES[value[0] - 1] : undefined;
  if (type === undefined || !Number.isInteger(value[0])) {
    throw protocolError(`unknown frame type ${String(value[0])}`);
  }
  const f = new Fields(type, value);
  const frame = readFields(type, f);
  f.end();
  return frame;
}

function readFields(type: FrameType, f: Fields): Frame {
  switch (type) {
    case "hello":
      return {
        type,
        versions: f.uintArray("versions"),
        session: f.session("session"),
        publicKey: f.bin("publicKey", PUBLIC_KEY_BYTES),
        token: f.stringOrNull("token"),
      };
    case "challenge":
      return {
        type,
        version: f.uint("version"),
        serverId: f.name("serverId"),
        nonce: f.bin("nonce", NONCE_BYTES),
        limits: f.limits("limits"),
      };
    case "prove":
      return { type, signature: f.bin("signature", SIGNATURE_BYTES) };
    case "welcome":
      return { type };
    case "subscribe":
      return {
        type,
        repo: f.repo(),
        cursor: f.cursorOrNull("cursor"),
        versionVector: f.versionVectorOrNull("versionVector"),
      };
    case "unsubscribe":
    case "reset":
      return { type, repo: f.repo() };
    case "credit":
      return { type, repo: f.repo(), bytes: f.uint("bytes") };
    case "blocks":
      return { type, repo: f.repo(), frames: f.blockArray("frames") };
    case "synced": {
      const repo = f.repo();
      const cursor = f.cursorOrNull("cursor");
      if (cursor === null) throw protocolError("synced: cursor must not be nil");
      return { type, repo, cursor, versionVector: f.versionVectorOrNull("versionVector") };
    }
    case "push":
      return { type, repo: f.repo(), id: f.uint("id"), frames: f.blockArray("frames") };
    case "ack":
      return {
        type,
        repo: f.repo(),
        id: f.uint("id"),
        applied: f.uint("applied"),
        duplicates: f.uint("duplicates"),
        rejected: f.rejected("rejected"),
        position: f.uint("position"),
      };
    case "live":
      return {
        type,
        repo: f.repo(),
        frames: f.blockArray("frames"),
        position: f.uint("position"),
      };
    case "members":
      return {
        type,
        repo: f.repo(),
        writers: f.binArray("writers", PUBLIC_KEY_BYTES),
        canWrite: f.boolean("canWrite"),
      };
    case "denied":
      return {
        type,
        repo: f.repo(),
        right: f.right("right"),
        code: f.string("code"),
        message: f.string("message"),
      };
    case "ping":
    case "pong":
      return { type, n: f.uint("n") };
    case "goaway":
      return { type, reason: f.string("reason"), retryAfterMs: f.uint("retryAfterMs") };
    case "error":
      return { type, code: f.string("code"), message: f.string("message") };
  }
}

/** Reads a frame's fields in order, each checked as it is taken. */
class Fields {
  readonly #type: FrameType;
  readonly #values: unknown[];
  #next = 1;

  constructor(type: FrameType, values: unknown[]) {
    this.#type = type;
    this.#values = values;
  }

  /** No field may be left over. */
  end(): void {
    if (this.#values.length !== this.#next) {
      throw protocolError(
        `${this.#type}: expected ${this.#next - 1} fields, got ${this.#values.length - 1}`,
      );
    }
  }

  #take(name: string): unknown {
    if (this.#next >= this.#values.length) throw protocolError(`${this.#type}: ${name} missing`);
    return this.#values[this.#next++];
  }

  #bad(name: string, expected: string): CairnError {
    return protocolError(`${this.#type}: ${name} must be ${expected}`);
  }

  uint(name: string): number {
    const value = this.#take(name);
    if (!isUint(value)) throw this.#bad(name, "a non-negative safe integer");
    return value;
  }

  boolean(name: string): boolean {
    const value = this.#take(name);
    if (typeof value !== "boolean") throw this.#bad(name, "a boolean");
    return value;
  }

  string(name: string): string {
    const value = this.#take(name);
    if (typeof value !== "string") throw this.#bad(name, "a string");
    return value;
  }

  stringOrNull(name: string): string | null {
    const value = this.#take(name);
    if (value !== null && typeof value !== "string") throw this.#bad(name, "a string or nil");
    return value;
  }

  name(name: string): string {
    const value = this.#take(name);
    if (!isName(value)) throw this.#bad(name, `a string of 1 to ${MAX_NAME_LENGTH} characters`);
    return value;
  }

  session(name: string): string {
    const value = this.#take(name);
    if (typeof value !== "string" || !SESSION_PATTERN.test(value)) {
      throw this.#bad(name, "a session id (22 base64url characters)");
    }
    return value;
  }

  repo(): string {
    const value = this.#take("repo");
    try {
      return checkRepositoryPath(value);
    } catch (err) {
      throw protocolError(`${this.#type}: repo: ${(err as Error).message}`, err);
    }
  }

  right(name: string): "read" | "write" {
    const value = this.#take(name);
    if (value !== "read" && value !== "write") throw this.#bad(name, `"read" or "write"`);
    return value;
  }

  bin(name: string, length: number): Uint8Array {
    const value = this.#take(name);
    if (!(value instanceof Uint8Array) || value.length !== length) {
      throw this.#bad(name, `bin of ${length} bytes`);
    }
    return value;
  }

  /** An array of bin; of exactly `length` bytes each when given. */
  binArray(name: string, length?: number): Uint8Array[] {
    const value = this.#take(name);
    if (!Array.isArray(value)) throw this.#bad(name, "an array of bin");
    for (const item of value) {
      if (!(item instanceof Uint8Array) || (length !== undefined && item.length !== length)) {
        throw this.#bad(name, length === undefined ? "an array of bin" : `bin(${length})[]`);
      }
    }
    return value;
  }

  /**
   * An array of blocks' bytes, none shorter than a block can be: a frame of many tiny bins would
   * cost far more to hold decoded than its bytes (a view each), and the server holds a client's
   * frames until it answers them, counting their bytes.
   */
  blockArray(name: string): Uint8Array[] {
    const value = this.binArray(name);
    if (value.some((bin) => bin.length < MIN_BLOCK_BYTES)) {
      throw this.#bad(name, `blocks of at least ${MIN_BLOCK_BYTES} bytes each`);
    }
    return value;
  }

  uintArray(name: string): number[] {
    const value = this.#take(name);
    if (!Array.isArray(value) || !value.every(isUint)) throw this.#bad(name, "an array of uint");
    return value;
  }

  limits(name: string): { maxFrame: number; heartbeatMs: number } {
    const value = this.#take(name);
    if (
      !isPlainObject(value) || Object.keys(value).length !== 2 || !isUint(value.maxFrame) ||
      !isUint(value.heartbeatMs)
    ) {
      throw this.#bad(name, "{ maxFrame: uint, heartbeatMs: uint }");
    }
    return { maxFrame: value.maxFrame, heartbeatMs: value.heartbeatMs };
  }

  cursorOrNull(name: string): Cursor | null {
    const value = this.#take(name);
    if (value === null) return null;
    if (!Array.isArray(value) || value.length !== 2 || !isName(value[0]) || !isUint(value[1])) {
      throw this.#bad(name, "[epoch: str, position: uint] or nil");
    }
    return [value[0], value[1]];
  }

  versionVectorOrNull(name: string): VersionVector | null {
    const value = this.#take(name);
    if (value === null) return null;
    if (!isPlainObject(value)) throw this.#bad(name, "a map { session: uint } or nil");
    const vector: VersionVector = {};
    for (const [session, seq] of Object.entries(value)) {
      if (!SESSION_PATTERN.test(session) || !isUint(seq)) {
        throw this.#bad(name, "a map { session: uint } or nil");
      }
      vector[session] = seq;
    }
    return vector;
  }

  rejected(name: string): { index: number; code: string; message: string }[] {
    const value = this.#take(name);
    const bad = () => this.#bad(name, "an array of [index: uint, code: str, message: str]");
    if (!Array.isArray(value)) throw bad();
    return value.map((entry) => {
      if (
        !Array.isArray(entry) || entry.length !== 3 || !isUint(entry[0]) ||
        typeof entry[1] !== "string" || typeof entry[2] !== "string"
      ) throw bad();
      return { index: entry[0], code: entry[1], message: entry[2] };
    });
  }
}

function isUint(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function isName(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_NAME_LENGTH;
}

function protocolError(message: string, cause?: unknown): CairnError {
  return new CairnError("E_PROTOCOL", message, cause === undefined ? undefined : { cause });
}

/** The bytes a client signs in `prove` (docs/sync.md, Handshake). */
export function proofMessage(nonce: Uint8Array, serverId: string, session: string): Uint8Array {
  const encoder = new TextEncoder();
  const prefix = encoder.encode(`cairn-sync/${PROTOCOL_VERSION}\n`);
  const server = encoder.encode(serverId);
  const sessionBytes = encoder.encode(session);
  const message = new Uint8Array(
    prefix.length + nonce.length + server.length + 1 + sessionBytes.length,
  );
  let at = 0;
  for (const part of [prefix, nonce, server, new Uint8Array(1), sessionBytes]) {
    message.set(part, at);
    at += part.length;
  }
  return message;
}

/**
 * A bound on the bytes of a `blocks`, `push`, `live` or `members` frame for `repo` apart from
 * its `bin` elements: array headers, type, repo string, id, position or canWrite. Pass it to
 * groupFrames.
 */
export function frameOverhead(repo: string): number {
  // fixarray(4) + type + str32 header + repo + uint64 + array32 header of the frames.
  return 1 + 1 + 5 + new TextEncoder().encode(repo).length + 9 + 5;
}

/**
 * Groups block frames so that each group, sent in one frame of the given overhead, stays <=
 * maxFrame; a single block too large for any frame is an E_TOO_LARGE error.
 */
export function groupFrames(
  frames: readonly Uint8Array[],
  maxFrame: number,
  overhead: number,
): Uint8Array[][] {
  const budget = maxFrame - overhead;
  const groups: Uint8Array[][] = [];
  let group: Uint8Array[] = [];
  let size = 0;
  for (const frame of frames) {
    const cost = binCost(frame.length);
    if (cost > budget) {
      throw new CairnError(
        "E_TOO_LARGE",
        `a block of ${frame.length} bytes does not fit a frame of at most ${maxFrame} bytes`,
      );
    }
    if (size + cost > budget) {
      groups.push(group);
      group = [];
      size = 0;
    }
    group.push(frame);
    size += cost;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/** A MessagePack bin element's size: its header (bin 8, 16 or 32) and its bytes. */
export function binCost(length: number): number {
  return length + (length < 0x100 ? 2 : length < 0x10000 ? 3 : 5);
}
