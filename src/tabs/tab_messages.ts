/**
 * The messages tabs of one database exchange over their BroadcastChannel (docs/browser.md, "Many
 * tabs"). A channel is open to every script of the origin, so whatever arrives is hostile: a
 * message is a structured-clone value that `decodeTabMessage` checks field by field (exact keys,
 * exact types, bounded sizes) before anything else sees it. Whatever does not match is a
 * CairnError E_PROTOCOL, never another exception, so the tab drops the message and carries on.
 *
 * Blocks travel as the same sealed bytes as on the network; the receiving repository verifies
 * them again (importBlocks), so a forged block is refused there, not here. A block may be as
 * large as any the database seals and stores (one commit is one block, whatever its size): a
 * bound here below that left a tab's big write, and any load of a repository holding one,
 * waiting for good.
 */
import { CairnError } from "../core/errors.ts";
import { isPlainObject } from "../core/wire_validation.ts";
import { checkRepositoryPath } from "../core/repository_path.ts";

/**
 * The version of these messages, which every message carries (`protocol`). Tabs of one database
 * may run two Cairn releases (a page loaded before a deploy, one after); a message of another
 * version is not read. So that tabs can always tell each other apart, every version keeps this
 * much: each message is a plain object with `protocol` (a message without it is of version 0,
 * before versions) and `type`, and the leader posts `{ type: "heartbeat", leader, term }` every
 * HEARTBEAT_MS. Version 2 (2026-11-29): the leader's answers name it (`from`).
 */
export const TAB_PROTOCOL = 2;

/** Most blocks one message may carry. */
export const MAX_TAB_BLOCKS = 4096;
/** An Ed25519 secret seed. */
const SECRET_BYTES = 32;
/** Longest tab id: tabs name themselves with a random base64url string. */
const MAX_TAB_ID = 64;
/**
 * The greatest leader term a message may carry. Tabs count one term per change of leader, so
 * honest ones never come near it; a greater one is a forged message, refused. The election stays
 * at it rather than count past it (election.ts), so a term a tab sends always encodes.
 */
export const MAX_TERM = 2 ** 52;

export type TabMessage =
  /** The leader is alive: sent every heartbeat interval. `term` grows with each new leader. */
  | { type: "heartbeat"; leader: string; term: number }
  /**
   * A leader is ready to answer joins, loads and pushes (sent once it serves): followers send it
   * again whatever the last leader left unanswered.
   */
  | { type: "serving"; leader: string; term: number }
  /** A tab opening the database as a follower asks the leader for the database's secret. */
  | { type: "join"; from: string; id: number }
  /**
   * The leader's answer to `join`: the stored session's secret, from which each tab derives the
   * key it signs with (tab_keys.ts). Any script of the origin can read it from OPFS anyway.
   * Every answer names the leader that sends it (`from`, as its heartbeats name it): a tab takes
   * answers only from the leader it knows (version 2; version 1 did not say).
   */
  | { type: "welcome"; from: string; to: string; id: number; secret: Uint8Array }
  /** A follower asks the leader for a repository's blocks (to load it at open). */
  | { type: "load"; from: string; repo: string; id: number }
  /**
   * The leader's answer to `load`: every block it holds of the repository, in as many messages
   * as the limits below need; `last` marks the final one.
   */
  | {
    type: "loaded";
    from: string;
    to: string;
    repo: string;
    id: number;
    frames: Uint8Array[];
    last: boolean;
  }
  /** A follower's sealed blocks, for the leader to persist; `id` names them in the `persisted`. */
  | { type: "push"; from: string; repo: string; id: number; frames: Uint8Array[] }
  /** A follower that has not heard the leader for a while asks it to answer (a heartbeat). */
  | { type: "probe"; from: string }
  /**
   * The leader could not open the repository a `load` or `push` (`id`) was for, or read its
   * blocks: the follower's open fails with `error`, or its flush, as in one tab.
   */
  | { type: "unserved"; from: string; to: string; repo: string; id: number; error: string }
  /**
   * The leader persisted a push under the database's durability mode (or could not: `error`).
   * `repo` is the push's (and `id` is unique among the page's pushes: see repository_link.ts).
   */
  | { type: "persisted"; from: string; to: string; repo: string; id: number; error: string | null }
  /**
   * A following tab's `db.flush()`, once the leader persisted its blocks: the leader makes all
   * it stored durable (fsync, whatever the durability mode) and answers `flushed`.
   */
  | { type: "flush"; from: string; id: number }
  /** The answer to `flush`: all the leader stored is durable, or it could not be (`error`). */
  | { type: "flushed"; from: string; to: string; id: number; error: string | null }
  /** Blocks new to the database (sealed in some tab, persisted by the leader), for every tab. */
  | { type: "blocks"; from: string; repo: string; frames: Uint8Array[] }
  /** A tab asks the leader how its connection to a sync server is (answered to every tab). */
  | { type: "sync-ask"; from: string; url: string }
  /**
   * The leader's connection to a sync server, sent when it changes and when asked: its status,
   * how many blocks the server has not acknowledged, and the last error ("CODE: message").
   */
  | {
    type: "sync-status";
    leader: string;
    url: string;
    status: TabSyncStatus;
    unacknowledged: number;
    error: string | null;
  }
  /** The leader holds no connection to that server: the asking tab connects itself. */
  | { type: "sync-absent"; to: string; url: string }
  /**
   * A tab whose blocks the leader has persisted asks to be told once the server holds them
   * (and everything else the leader holds): `sync-done`.
   */
  | { type: "sync-wait"; from: string; url: string; id: number }
  /** The answer to `sync-wait`: the server holds it all, or `error` ("CODE: message"). */
  | { type: "sync-done"; to: string; url: string; id: number; error: string | null };

/** A leader's connection as other tabs see it ("closed" is never sent: a closed one is absent). */
export type TabSyncStatus = "connecting" | "catching-up" | "synced" | "offline";

const SYNC_STATUSES: readonly string[] = ["connecting", "catching-up", "synced", "offline"];
/** Longest error message a tab message carries. */
const MAX_ERROR = 4096;
/** Longest server URL a tab message carries (the longest `sync()` takes). */
export const MAX_URL = 2048;

export type TabMessageType = TabMessage["type"];

/** The fields of each message besides `type`, with the check of each. */
const FIELDS: { [T in TabMessageType]: Record<string, (value: unknown, where: string) => void> } = {
  heartbeat: { leader: checkTabId, term: checkTerm },
  serving: { leader: checkTabId, term: checkTerm },
  probe: { from: checkTabId },
  join: { from: checkTabId, id: checkCount },
  welcome: { from: checkTabId, to: checkTabId, id: checkCount, secret: checkSecret },
  load: { from: checkTabId, repo: checkRepo, id: checkCount },
  loaded: {
    from: checkTabId,
    to: checkTabId,
    repo: checkRepo,
    id: checkCount,
    frames: checkFrames,
    last: checkFlag,
  },
  push: { from: checkTabId, repo: checkRepo, id: checkCount, frames: checkFrames },
  persisted: {
    from: checkTabId,
    to: checkTabId,
    repo: checkRepo,
    id: checkCount,
    error: checkError,
  },
  unserved: {
    from: checkTabId,
    to: checkTabId,
    repo: checkRepo,
    id: checkCount,
    error: checkReason,
  },
  flush: { from: checkTabId, id: checkCount },
  flushed: { from: checkTabId, to: checkTabId, id: checkCount, error: checkError },
  blocks: { from: checkTabId, repo: checkRepo, frames: checkFrames },
  "sync-ask": { from: checkTabId, url: checkUrl },
  "sync-status": {
    leader: checkTabId,
    url: checkUrl,
    status: checkSyncStatus,
    unacknowledged: checkCount,
    error: checkError,
  },
  "sync-absent": { to: checkTabId, url: checkUrl },
  "sync-wait": { from: checkTabId, url: checkUrl, id: checkCount },
  "sync-done": { to: checkTabId, url: checkUrl, id: checkCount, error: checkError },
};

function protocol(message: string): CairnError {
  return new CairnError("E_PROTOCOL", `tab message: ${message}`);
}

/** A leader of another version heard: its version (0: before versions) and its term. */
export interface ForeignLeader {
  readonly protocol: number;
  readonly term: number;
}

/**
 * Checks a value received from the channel and returns its message: a new object of its fields,
 * without the version. Throws E_UNSUPPORTED_VERSION for a message of another version (see
 * foreignLeader), E_PROTOCOL for anything else that is not exactly one of the messages above.
 */
export function decodeTabMessage(value: unknown): TabMessage {
  const type = checkedType(value);
  const fields = value as Record<string, unknown>;
  const message: Record<string, unknown> = { type };
  for (const name of Object.keys(FIELDS[type])) message[name] = fields[name];
  return message as TabMessage;
}

/** A message as it crosses the channel: with the version of the messages. */
export type PostedTabMessage = TabMessage & { readonly protocol: typeof TAB_PROTOCOL };

/**
 * A message ready to post: a fresh object of exactly its fields and the version (nothing extra
 * leaks out), checked as a receiving tab checks it.
 */
export function encodeTabMessage(message: TabMessage): PostedTabMessage {
  const copy: Record<string, unknown> = { protocol: TAB_PROTOCOL, type: message.type };
  for (const name of Object.keys(FIELDS[message.type])) {
    copy[name] = (message as unknown as Record<string, unknown>)[name];
  }
  checkedType(copy);
  return copy as PostedTabMessage;
}

/** The type of `value` if it is exactly one of the messages above, of this version; else throws. */
function checkedType(value: unknown): TabMessageType {
  if (!isPlainObject(value)) throw protocol("not a plain object");
  if (value.protocol !== TAB_PROTOCOL) {
    throw new CairnError(
      "E_UNSUPPORTED_VERSION",
      `tab message of tab protocol ${describeVersion(value.protocol)}; this tab speaks ` +
        TAB_PROTOCOL,
    );
  }
  const type = value.type;
  if (typeof type !== "string" || !Object.hasOwn(FIELDS, type)) {
    throw protocol(
      `unknown type ${typeof type === "string" ? JSON.stringify(type.slice(0, 32)) : typeof type}`,
    );
  }
  const fields = FIELDS[type as TabMessageType];
  const keys = Object.keys(value);
  if (keys.length !== Object.keys(fields).length + 2) {
    throw protocol(`${type} has fields ${keys.slice(0, 16).join(", ")}`);
  }
  for (const [name, check] of Object.entries(fields)) {
    if (!Object.hasOwn(value, name)) throw protocol(`${type} lacks ${name}`);
    check(value[name], `${type}.${name}`);
  }
  return type as TabMessageType;
}

/**
 * The leader a value announces if it is another version's heartbeat or serving (what every
 * version keeps of them: `leader` and `term`); undefined for anything else.
 */
export function foreignLeader(value: unknown): ForeignLeader | undefined {
  if (!isPlainObject(value) || value.protocol === TAB_PROTOCOL) return undefined;
  const version = value.protocol ?? 0;
  if (!Number.isSafeInteger(version) || (version as number) < 0) return undefined;
  if (value.type !== "heartbeat" && value.type !== "serving") return undefined;
  try {
    checkTabId(value.leader, "leader");
    checkTerm(value.term, "term");
  } catch {
    return undefined;
  }
  return { protocol: version as number, term: value.term as number };
}

function describeVersion(version: unknown): string {
  if (version === undefined) return "0 (before versions)";
  return Number.isSafeInteger(version) ? String(version) : typeof version;
}

/** An error as a tab message carries it (at most the length checkError takes). */
export function describeFailure(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, MAX_ERROR);
}

function checkTabId(value: unknown, where: string): void {
  if (typeof value !== "string" || !/^[A-Za-z0-9_-]+$/.test(value) || value.length > MAX_TAB_ID) {
    throw protocol(`${where} is not a tab id`);
  }
}

function checkCount(value: unknown, where: string): void {
  if (!Number.isSafeInteger(value) || (value as number) < 0) {
    throw protocol(`${where} is not a non-negative integer`);
  }
}

function checkTerm(value: unknown, where: string): void {
  checkCount(value, where);
  if ((value as number) > MAX_TERM) throw protocol(`${where} is over ${MAX_TERM}`);
}

function checkRepo(value: unknown, where: string): void {
  try {
    checkRepositoryPath(value);
  } catch {
    throw protocol(`${where} is not a repository path`);
  }
}

function checkFlag(value: unknown, where: string): void {
  if (typeof value !== "boolean") throw protocol(`${where} is not a boolean`);
}

function checkSecret(value: unknown, where: string): void {
  if (!(value instanceof Uint8Array) || value.length !== SECRET_BYTES) {
    throw protocol(`${where} is not a ${SECRET_BYTES}-byte Uint8Array`);
  }
}

function checkError(value: unknown, where: string): void {
  if (value !== null && (typeof value !== "string" || value.length > MAX_ERROR)) {
    throw protocol(`${where} is neither null nor a short string`);
  }
}

/** An error that must be there: a short string. */
function checkReason(value: unknown, where: string): void {
  if (value === null) throw protocol(`${where} is null`);
  checkError(value, where);
}

function checkUrl(value: unknown, where: string): void {
  if (typeof value !== "string" || value.length > MAX_URL || !/^wss?:\/\//.test(value)) {
    throw protocol(`${where} is not a ws:// or wss:// URL`);
  }
}

function checkSyncStatus(value: unknown, where: string): void {
  if (typeof value !== "string" || !SYNC_STATUSES.includes(value)) {
    throw protocol(`${where} is not a sync status`);
  }
}

function checkFrames(value: unknown, where: string): void {
  if (!Array.isArray(value)) throw protocol(`${where} is not an array`);
  if (value.length > MAX_TAB_BLOCKS) throw protocol(`${where} holds over ${MAX_TAB_BLOCKS} blocks`);
  for (let i = 0; i < value.length; i++) {
    const frame = value[i];
    if (!(frame instanceof Uint8Array) || frame.length === 0) {
      throw protocol(`${where}[${i}] is not a non-empty Uint8Array`);
    }
  }
}
