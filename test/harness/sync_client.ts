/**
 * A raw sync-protocol client for server tests, on the global WebSocket (Deno and Node): it sends
 * frames (or any bytes) and hands back what the server sends, frame by frame, with the exact
 * bytes of each message kept too.
 */
import { Cairn } from "../../src/db/database.ts";
import { defineSchema } from "../../src/core/schema.ts";
import { fromBase64Url } from "../../src/core/bytes.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { decodeBlock } from "../../src/core/block.ts";
import { type AuthorizedBlock, authorizedBlock } from "../../src/sync/server/store.ts";
import {
  decodeFrame,
  DEFAULT_MAX_FRAME,
  encodeFrame,
  type Frame,
  frameOverhead,
  groupFrames,
  proofMessage,
  PROTOCOL_VERSION,
} from "../../src/sync/protocol.ts";

/** A session able to prove itself: a Cairn database in memory (it can also author blocks). */
export interface TestSession {
  readonly db: Cairn;
  readonly session: string;
  readonly publicKey: Uint8Array;
}

export async function newSession(): Promise<TestSession> {
  const db = await Cairn.open();
  return { db, session: db.session.id, publicKey: fromBase64Url(db.session.publicKey)! };
}

/** A session's public key as the access rules name it (base64url). */
export function keyOf(session: TestSession): string {
  return session.db.session.publicKey;
}

type FrameOf<T extends Frame["type"]> = Extract<Frame, { type: T }>;

/** How long a test waits for a frame before failing with what it got instead (a hang guard). */
const WAIT_MS = 20_000;

/** The `hello` a session sends first (this protocol version, no token), with any field changed. */
export function helloFrame(
  session: TestSession,
  changes: Partial<FrameOf<"hello">> = {},
): FrameOf<"hello"> {
  return {
    type: "hello",
    versions: [PROTOCOL_VERSION],
    session: session.session,
    publicKey: session.publicKey,
    token: null,
    ...changes,
  };
}

export class RawClient {
  readonly socket: WebSocket;
  /** Frames received and not yet taken by `next`, with their message bytes. */
  readonly #inbox: { frame: Frame; bytes: Uint8Array }[] = [];
  /** Every frame received, in order. */
  readonly received: { frame: Frame; bytes: Uint8Array }[] = [];
  #wake: (() => void) | undefined;
  readonly closed: Promise<{ code: number; reason: string }>;
  #closedWith: { code: number; reason: string } | undefined;

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.binaryType = "arraybuffer";
    socket.onmessage = (event) => {
      const bytes = new Uint8Array(event.data as ArrayBuffer);
      const entry = { frame: decodeFrame(bytes, 64 << 20), bytes };
      this.#inbox.push(entry);
      this.received.push(entry);
      this.#wake?.();
    };
    this.closed = new Promise((resolve) => {
      socket.onclose = (event) => {
        this.#closedWith = { code: event.code, reason: event.reason };
        resolve(this.#closedWith);
        this.#wake?.();
      };
    });
  }

  static async open(url: string): Promise<RawClient> {
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => resolve();
      socket.onerror = () => reject(new Error(`cannot connect to ${url}`));
    });
    socket.onerror = () => {};
    return new RawClient(socket);
  }

  /** Connects and completes the handshake as `session` (a new one when not given). */
  static async connect(
    url: string,
    session?: TestSession,
    token: string | null = null,
  ): Promise<RawClient & { session: TestSession }> {
    const client = await RawClient.open(url);
    const as = session ?? await newSession();
    await client.handshake(as, token);
    return Object.assign(client, { session: as });
  }

  async handshake(
    session: TestSession,
    token: string | null = null,
  ): Promise<FrameOf<"challenge">> {
    this.send(helloFrame(session, { token }));
    const challenge = await this.next("challenge");
    this.send({ type: "prove", signature: await sign(session, challenge) });
    await this.next("welcome");
    return challenge;
  }

  send(frame: Frame): void {
    this.socket.send(encodeFrame(frame));
  }

  sendRaw(data: Uint8Array | string): void {
    this.socket.send(data);
  }

  /** The next frame of this type (frames of other types stay in the inbox). */
  async next<T extends Frame["type"]>(type: T): Promise<FrameOf<T>> {
    return (await this.nextEntry(type)).frame as FrameOf<T>;
  }

  /** The next frame of one of these types, with its message bytes. */
  async nextEntry(
    ...types: Frame["type"][]
  ): Promise<{ frame: Frame; bytes: Uint8Array }> {
    const type = types.join(" or ");
    const deadline = Date.now() + WAIT_MS;
    while (true) {
      const at = this.#inbox.findIndex((entry) => types.includes(entry.frame.type));
      if (at >= 0) return this.#inbox.splice(at, 1)[0];
      if (this.#closedWith) {
        throw new Error(`closed (${this.#closedWith.code}) before a ${type} frame`);
      }
      if (Date.now() > deadline) {
        throw new Error(`no ${type} frame; got ${this.#inbox.map((e) => e.frame.type)}`);
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, 50);
      });
    }
  }

  /** Frames of this type received so far and not taken. */
  pending(type: Frame["type"]): Frame[] {
    return this.#inbox.filter((entry) => entry.frame.type === type).map((entry) => entry.frame);
  }

  /** Subscribes, grants credit, and collects the catch-up until `synced`. */
  async catchUp(
    repo: string,
    from: { cursor?: readonly [string, number]; versionVector?: Record<string, number> } = {},
    credit = DEFAULT_MAX_FRAME * 64,
  ): Promise<{ blocks: Uint8Array[]; synced: FrameOf<"synced">; members: FrameOf<"members"> }> {
    this.send({
      type: "subscribe",
      repo,
      cursor: from.cursor ?? null,
      versionVector: from.versionVector ?? null,
    });
    const members = await this.next("members");
    this.send({ type: "credit", repo, bytes: credit });
    const synced = await this.next("synced");
    const blocks = this.#inbox.filter((e) => e.frame.type === "blocks")
      .flatMap((e) => (e.frame as FrameOf<"blocks">).frames);
    this.#inbox.splice(
      0,
      this.#inbox.length,
      ...this.#inbox.filter((e) => e.frame.type !== "blocks"),
    );
    return { blocks, synced, members };
  }

  close(): Promise<{ code: number; reason: string }> {
    this.socket.close();
    return this.closed;
  }
}

export async function sign(
  session: TestSession,
  challenge: FrameOf<"challenge">,
): Promise<Uint8Array> {
  const suite = await cryptoSuite();
  const key = await suite.ed25519.fromSecret(session.db.exportSecretKey());
  return await suite.ed25519.sign(
    key,
    proofMessage(challenge.nonce, challenge.serverId, session.session),
  );
}

/** `count` signed blocks by `session` in repository `repo` (one create each), exported. */
export async function blocksOf(
  session: TestSession,
  repo: string,
  count: number,
  from = 0,
): Promise<Uint8Array[]> {
  const handle = await session.db.open(repo);
  const since = handle.versionVector();
  for (let i = 0; i < count; i++) {
    await handle.create(NOTE, { text: `note ${from + i} by ${session.session}` });
    await handle.flush();
  }
  return await handle.exportBlocks(since);
}

/** Blocks as a server's store takes them once a connection has decoded and authorized them. */
export async function authorized(frames: Uint8Array[]): Promise<AuthorizedBlock[]> {
  const suite = await cryptoSuite();
  return await Promise.all(
    frames.map(async (bytes) => authorizedBlock(bytes, await decodeBlock(bytes, suite))),
  );
}

export const NOTE = defineSchema({ ns: "note", version: 1, fields: { text: { type: "string" } } });

let pushIds = 0;

/** Pushes blocks (in frames under maxFrame) and returns the acks. */
export async function pushBlocks(
  client: RawClient,
  repo: string,
  frames: Uint8Array[],
  maxFrame = DEFAULT_MAX_FRAME,
): Promise<FrameOf<"ack">[]> {
  const acks: FrameOf<"ack">[] = [];
  for (const group of groupFrames(frames, maxFrame, frameOverhead(repo))) {
    const id = ++pushIds;
    client.send({ type: "push", repo, id, frames: group });
    const ack = await client.next("ack");
    if (ack.id !== id) throw new Error(`ack ${ack.id} for push ${id}`);
    acks.push(ack);
  }
  return acks;
}

/** Byte-for-byte equality of two lists of blocks, as plain arrays for a readable diff. */
export function asArrays(frames: readonly Uint8Array[]): number[][] {
  return frames.map((frame) => Array.from(frame));
}
