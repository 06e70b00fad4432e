/**
 * One client's subscription to one repository: the members it is told, catch-up paced by its
 * credit, then live blocks. A client whose socket buffers past the high-water mark is not sent
 * live frames but falls behind ("lagging") and is brought up to date from the store as its
 * buffer drains, so a slow client costs the server at most about one high-water mark of memory.
 *
 * `sent` is the position up to which the client has been sent every block: catch-up reads after
 * it, live frames must continue it exactly (a gap sends the client back to reading the store).
 */
import type { VersionVector } from "../../repo/repository.ts";
import { type Cursor, encodeFrame, type Frame, frameOverhead, groupFrames } from "../protocol.ts";
import type { OpenRepository, RepositoryListener } from "./repositories.ts";
import type { ApplyResult, PlacedBlock } from "./store.ts";

/** The connection side a subscription sends through. */
export interface Outbox {
  send(frame: Frame): number;
  /** Sends a frame encoded already (one encoding shared by many subscribers). */
  sendEncoded(bytes: Uint8Array): number;
  readonly bufferedAmount: number;
  /** Ends the connection over a frame that cannot be sent (a stored block too large). */
  fail(err: unknown): void;
}

export interface SubscriptionLimits {
  readonly maxFrame: number;
  readonly highWaterMark: number;
  /** How often a subscription held back by a full socket buffer looks again. */
  readonly drainPollMs: number;
}

/** Positions of a version vector's catch-up read at a time. */
const POSITIONS_PER_READ = 256;

type Mode = "catchup" | "live" | "lagging" | "ended";

/**
 * A result's `live` frames, encoded by the first subscriber sent all of it and reused by the
 * others: every subscriber in step gets the same bytes, so a write to N subscribers is encoded
 * once, not N times.
 */
const liveFrames = new WeakMap<ApplyResult, Uint8Array[]>();

/** Where a subscription starts: see the fields of Subscription of the same names. */
interface SubscriptionStart {
  sent: number;
  pending: number[];
  membersUpTo: number;
  vectorOf: VersionVector | "every" | undefined;
}

export class Subscription implements RepositoryListener {
  readonly repository: OpenRepository;
  readonly #outbox: Outbox;
  readonly #limits: SubscriptionLimits;
  readonly #overhead: number;
  /**
   * The sessions whose entries of the server's version vector `synced` carries: none (the client
   * subscribed by cursor), every one (by neither), or those the client's own vector names.
   */
  readonly #vectorOf: VersionVector | "every" | undefined;
  #canWrite: boolean;
  #mode: Mode = "catchup";
  #sent: number;
  /** Positions at or below the head at subscribe time that a version vector lacks. */
  #pending: number[];
  /** Every writer placed at or before this position has been sent in a `members` frame. */
  #membersUpTo: number;
  #credit = 0;
  #pumping = false;
  #again = false;
  #drainTimer: ReturnType<typeof setTimeout> | undefined;

  private constructor(
    repository: OpenRepository,
    outbox: Outbox,
    limits: SubscriptionLimits,
    start: SubscriptionStart,
    canWrite: boolean,
  ) {
    this.#canWrite = canWrite;
    this.repository = repository;
    this.#outbox = outbox;
    this.#limits = limits;
    this.#overhead = frameOverhead(repository.stored.path);
    this.#sent = start.sent;
    this.#pending = start.pending;
    this.#membersUpTo = start.membersUpTo;
    this.#vectorOf = start.vectorOf;
  }

  /**
   * Sends `members` and starts the catch-up; undefined (after sending `reset`) when the cursor
   * is of another epoch or past the head.
   */
  static async start(
    repository: OpenRepository,
    outbox: Outbox,
    limits: SubscriptionLimits,
    from: { cursor: Cursor | null; versionVector: VersionVector | null; canWrite: boolean },
  ): Promise<Subscription | undefined> {
    const { stored } = repository;
    await stored.refresh();
    const head = stored.head();
    const { cursor } = from;
    let start: SubscriptionStart;
    if (cursor !== null) {
      if (cursor[0] !== stored.epoch || cursor[1] > head) {
        outbox.send({ type: "reset", repo: stored.path });
        return undefined;
      }
      start = { sent: cursor[1], pending: [], membersUpTo: cursor[1], vectorOf: undefined };
    } else {
      const missing = await stored.missingFrom(from.versionVector ?? {});
      const pending = missing.filter((position) => position <= head);
      start = { sent: head, pending, membersUpTo: 0, vectorOf: from.versionVector ?? "every" };
    }
    // Only writers added after the cursor: a reconnect does not resend every writer ever.
    const upTo = stored.head();
    const writers = (await stored.writersAfter(start.membersUpTo))
      .filter((writer) => writer.position <= upTo);
    sendMembers(outbox, stored.path, writers.map((writer) => writer.publicKey), {
      canWrite: from.canWrite,
      maxFrame: limits.maxFrame,
    });
    start.membersUpTo = Math.max(start.membersUpTo, upTo);
    const subscription = new Subscription(repository, outbox, limits, start, from.canWrite);
    repository.listeners.add(subscription);
    return subscription;
  }

  /**
   * The client's right to write changed while subscribed: a grant is a `members` frame that
   * adds no writer, a revocation is `denied` for writing (its pushes are refused from now on).
   */
  rightToWrite(canWrite: boolean): void {
    if (canWrite === this.#canWrite || this.#mode === "ended") return;
    this.#canWrite = canWrite;
    const repo = this.repository.stored.path;
    if (canWrite) this.#sendMembers([]);
    else {
      this.#outbox.send({
        type: "denied",
        repo,
        right: "write",
        code: "E_FORBIDDEN",
        message: `this session may no longer write ${repo}`,
      });
    }
  }

  addCredit(bytes: number): void {
    this.#credit = Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, this.#credit) + bytes);
    this.pump();
  }

  end(): void {
    this.#mode = "ended";
    clearTimeout(this.#drainTimer);
    this.repository.listeners.delete(this);
  }

  placed(result: ApplyResult, fromPusher: boolean): void {
    if (this.#mode !== "live") return; // catch-up and lagging read it from the store
    const blocks = result.placed.filter((block) => block.position > this.#sent);
    if (blocks.length === 0) return;
    if (blocks[0].position !== this.#sent + 1) return this.#fallBehind();
    if (!fromPusher && !this.#fitsLive(blocks)) {
      return this.#fallBehind(); // nothing more is queued for it, members included
    }
    const last = blocks[blocks.length - 1].position;
    const writers = result.newWriters.filter((writer) => writer.position > this.#membersUpTo);
    if (writers.length > 0) {
      this.#sendMembers(writers.map((writer) => writer.publicKey));
    }
    this.#membersUpTo = Math.max(this.#membersUpTo, last);
    // The pusher holds its own blocks; its ack told it their positions.
    if (fromPusher) {
      this.#sent = last;
      return;
    }
    if (blocks.length < result.placed.length) return this.#sendBlocks("live", blocks);
    let frames = liveFrames.get(result);
    if (!frames) {
      frames = this.#groups(blocks).map((group) => encodeFrame(this.#frameOf("live", group)));
      liveFrames.set(result, frames);
    }
    for (const bytes of frames) this.#outbox.sendEncoded(bytes);
    this.#sent = last;
  }

  /**
   * Whether `blocks` may be queued on the socket at once: its buffer is under the high-water
   * mark and stays within one frame past it, as a lagging client's does. A larger result (what
   * another server placed while this one's PostgreSQL listener was away, say) is read from the
   * store as the socket drains instead.
   */
  #fitsLive(blocks: readonly PlacedBlock[]): boolean {
    const { highWaterMark, maxFrame } = this.#limits;
    const buffered = this.#outbox.bufferedAmount;
    if (buffered >= highWaterMark) return false;
    let bytes = 0;
    for (const block of blocks) bytes += block.bytes.length;
    return buffered + bytes <= highWaterMark + maxFrame;
  }

  failed(err: unknown): void {
    this.#outbox.fail(err);
  }

  /** Runs catch-up or lagging until blocked (no credit, a full buffer) or done. */
  pump(): void {
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = true;
    (async () => {
      do {
        this.#again = false;
        if (this.#mode === "catchup") await this.#catchUp();
        else if (this.#mode === "lagging") await this.#readLive();
      } while (this.#again && this.#mode !== "ended");
    })().catch((err) => this.#outbox.fail(err)).finally(() => {
      this.#pumping = false;
      // Asked again between the loop's last check and here: run again.
      if (this.#again && this.#mode !== "ended") this.pump();
    });
  }

  #fallBehind(): void {
    this.#mode = "lagging";
    this.pump();
  }

  async #catchUp(): Promise<void> {
    const { stored } = this.repository;
    while (this.#mode === "catchup" && this.#credit > 0 && this.#roomToSend()) {
      if (this.#pending.length > 0) {
        const blocks = await stored.readAt(this.#pending.slice(0, POSITIONS_PER_READ));
        if (this.#mode !== "catchup") return;
        const sent = await this.#sendFirstFrame("blocks", blocks);
        this.#pending.splice(0, sent.length);
        continue;
      }
      const blocks = await stored.readAfter(this.#sent, this.#budget());
      if (this.#mode !== "catchup") return;
      if (blocks.length > 0) {
        const sent = await this.#sendFirstFrame("blocks", blocks);
        if (sent.length > 0) this.#sent = sent[sent.length - 1].position;
        continue;
      }
      const held = this.#vectorOf && await stored.versionVector();
      // Blocks placed during those awaits are caught up first; from here on, live sends them.
      if (this.#mode !== "catchup" || stored.head() > this.#sent) continue;
      this.#outbox.sendEncoded(this.#syncedFrame(held));
      this.#mode = "live";
    }
  }

  /** Sends a lagging client what it missed as `live` frames, while its buffer has room. */
  async #readLive(): Promise<void> {
    const { stored } = this.repository;
    while (this.#mode === "lagging" && this.#roomToSend()) {
      const blocks = await stored.readAfter(this.#sent, this.#budget());
      if (this.#mode !== "lagging") return;
      if (blocks.length === 0) {
        // Caught up: live from here. Otherwise nothing to read yet: the next placed() pumps
        // again (looping here would starve the event loop the store needs to go on).
        if (stored.head() <= this.#sent) this.#mode = "live";
        return;
      }
      const sent = await this.#sendFirstFrame("live", blocks);
      if (sent.length > 0) this.#sent = sent[sent.length - 1].position;
    }
  }

  /** The block bytes one frame can carry. */
  #budget(): number {
    return this.#limits.maxFrame - this.#overhead;
  }

  /** Whether the socket's buffer is under the high-water mark; if not, looks again later. */
  #roomToSend(): boolean {
    if (this.#outbox.bufferedAmount < this.#limits.highWaterMark) return true;
    this.#drainTimer ??= setTimeout(() => {
      this.#drainTimer = undefined;
      this.pump();
    }, this.#limits.drainPollMs);
    return false;
  }

  /** Sends the blocks that fit one frame, after the writers they introduce; returns them. */
  async #sendFirstFrame(type: "blocks" | "live", blocks: PlacedBlock[]): Promise<PlacedBlock[]> {
    const first =
      groupFrames(blocks.map((block) => block.bytes), this.#limits.maxFrame, this.#overhead)[0];
    const group = blocks.slice(0, first?.length ?? 0);
    if (group.length === 0) return group;
    const last = group[group.length - 1].position;
    if (last > this.#membersUpTo) {
      const writers = (await this.repository.stored.writersAfter(this.#membersUpTo))
        .filter((writer) => writer.position <= last);
      if (this.#mode === "ended") return [];
      if (writers.length > 0) this.#sendMembers(writers.map((writer) => writer.publicKey));
      this.#membersUpTo = last;
    }
    this.#sendGroup(type, group);
    return group;
  }

  /** Sends blocks (contiguous from `sent`) as as many frames as they need. */
  #sendBlocks(type: "live", blocks: PlacedBlock[]): void {
    for (const group of this.#groups(blocks)) this.#sendGroup(type, group);
    this.#sent = blocks[blocks.length - 1].position;
  }

  /** Blocks in groups that each fit one frame. */
  #groups(blocks: PlacedBlock[]): PlacedBlock[][] {
    const groups = groupFrames(
      blocks.map((block) => block.bytes),
      this.#limits.maxFrame,
      this.#overhead,
    );
    let at = 0;
    return groups.map((group) => blocks.slice(at, at += group.length));
  }

  #sendGroup(type: "blocks" | "live", group: PlacedBlock[]): void {
    const size = this.#outbox.send(this.#frameOf(type, group));
    if (type === "blocks") this.#credit -= size;
  }

  #frameOf(type: "blocks" | "live", group: PlacedBlock[]): Frame {
    const repo = this.repository.stored.path;
    const frames = group.map((block) => block.bytes);
    return type === "blocks"
      ? { type, repo, frames }
      : { type, repo, frames, position: group[group.length - 1].position };
  }

  /**
   * `synced`, encoded, with the entries of `held` the client asked for (see #vectorOf): they
   * tell it what to push of what it held when it subscribed, so the frame grows with the sessions
   * it holds, not with every session the repository has. Where even those do not fit in a frame,
   * the vector is empty: the client then pushes all it held, and the server counts duplicates.
   */
  #syncedFrame(held: VersionVector | undefined): Uint8Array {
    const { path, epoch } = this.repository.stored;
    let versionVector: VersionVector | null = null;
    if (held !== undefined) {
      const named = this.#vectorOf === "every" ? held : this.#vectorOf!;
      versionVector = {};
      for (const session in named) {
        if (Object.hasOwn(held, session)) versionVector[session] = held[session];
      }
    }
    const frame: Frame = { type: "synced", repo: path, cursor: [epoch, this.#sent], versionVector };
    const bytes = encodeFrame(frame);
    if (bytes.length <= this.#limits.maxFrame) return bytes;
    return encodeFrame({ ...frame, versionVector: {} });
  }

  #sendMembers(writers: Uint8Array[]): void {
    // Later members frames add writers; their canWrite is the right as it stands.
    sendMembers(this.#outbox, this.repository.stored.path, writers, {
      canWrite: this.#canWrite,
      maxFrame: this.#limits.maxFrame,
    });
  }
}

/**
 * Sends `writers` in as many `members` frames as `maxFrame` needs (at least one: it also says
 * whether the client may write). A client takes the frames after the first as additions, so a
 * list that replaces the writers it knew may be split too.
 */
function sendMembers(
  outbox: Outbox,
  repo: string,
  writers: Uint8Array[],
  { canWrite, maxFrame }: { canWrite: boolean; maxFrame: number },
): void {
  const groups = groupFrames(writers, maxFrame, frameOverhead(repo));
  for (const group of groups.length > 0 ? groups : [[]]) {
    outbox.send({ type: "members", repo, writers: group, canWrite });
  }
}
