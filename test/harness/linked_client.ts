/**
 * What the client tests share: a database linked to a scripted server through manual timers,
 * and the server-side steps most tests play (subscription, catch-up, acks).
 */
import { Cairn } from "../../src/db/database.ts";
import { defineSchema } from "../../src/core/schema.ts";
import { fromBase64Url } from "../../src/core/bytes.ts";
import type { CairnError } from "../../src/core/errors.ts";
import type { RepositoryHandle } from "../../src/db/repository_handle.ts";
import { type SyncLink, type SyncStatus, syncWith } from "../../src/sync/client.ts";
import type { SyncOptions } from "../../src/sync/options.ts";
import type { Cursor, Frame } from "../../src/sync/protocol.ts";
import { type FakeConnection, FakeSyncServer, ManualTimers } from "./fake_sync_server.ts";
import { OPTIONAL_TITLE } from "./schemas.ts";

export const Note = defineSchema(OPTIONAL_TITLE);

export const PATH = "/notes";

export interface Linked {
  db: Cairn;
  notes: RepositoryHandle;
  link: SyncLink;
  server: FakeSyncServer;
  timers: ManualTimers;
  /** The first connection, opened (the client has sent `hello`). */
  connection: FakeConnection;
  errors: CairnError[];
  statuses: SyncStatus[];
}

/**
 * A database with /notes open (after `before` ran on it), linked to a scripted server; by
 * default one in memory, else what `openDatabase` opens (with Note registered).
 */
export async function linked(
  options: SyncOptions = {},
  before?: (db: Cairn, notes: RepositoryHandle) => Promise<void>,
  random = () => 0.5,
  openDatabase = () => Cairn.open({ schemas: [Note] }),
): Promise<Linked> {
  const db = await openDatabase();
  const notes = await db.open(PATH);
  await before?.(db, notes);
  const server = new FakeSyncServer();
  const timers = new ManualTimers();
  const link = syncWith(db, "ws://sync.test", options, {
    socket: server.socket,
    setTimeout: timers.setTimeout,
    clearTimeout: timers.clearTimeout,
    random,
    wake: () => () => {},
  });
  const errors: CairnError[] = [];
  const statuses: SyncStatus[] = [];
  link.on("error", (err) => errors.push(err));
  link.on("status", (status) => statuses.push(status));
  const connection = await server.accept();
  return { db, notes, link, server, timers, connection, errors, statuses };
}

/** The public key bytes of a database's session. */
export function keyOf(db: Cairn): Uint8Array {
  return fromBase64Url(db.session.publicKey)!;
}

/**
 * Plays a subscription of /notes: reads `subscribe` and `credit`, lists `writers`, sends
 * `frames` as one `blocks` frame (if any), then `synced` at `cursor` with `serverVector`.
 */
export async function serveSubscription(
  connection: FakeConnection,
  {
    writers,
    canWrite = true,
    frames = [],
    cursor = ["epoch-1", frames.length],
    serverVector = null,
  }: {
    writers: Uint8Array[];
    canWrite?: boolean;
    frames?: Uint8Array[];
    cursor?: Cursor;
    serverVector?: Record<string, number> | null;
  },
): Promise<Extract<Frame, { type: "subscribe" }>> {
  const subscribe = await connection.expect("subscribe");
  await connection.expect("credit");
  connection.send({ type: "members", repo: PATH, writers, canWrite });
  if (frames.length > 0) connection.send({ type: "blocks", repo: PATH, frames });
  connection.send({ type: "synced", repo: PATH, cursor, versionVector: serverVector });
  return subscribe;
}

/** Acknowledges a push as a server that applied all of it. */
export function ack(connection: FakeConnection, push: Extract<Frame, { type: "push" }>): void {
  connection.send({
    type: "ack",
    repo: push.repo,
    id: push.id,
    applied: push.frames.length,
    duplicates: 0,
    rejected: [],
    position: 0,
  });
}

/** Lets queued microtasks and promise callbacks run (frames are delivered as microtasks). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
  await new Promise((resolve) => setTimeout(resolve, 0));
}

/** Waits (without a clock) until `condition` holds, letting the client's work run meanwhile. */
export async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (condition()) return;
    await settle();
  }
  throw new Error(`never happened: ${what}`);
}
