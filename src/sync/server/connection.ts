/**
 * One client connection, whatever the transport: the handshake (hello → challenge → prove →
 * welcome), then subscriptions, credit, pushes and heartbeats (docs/sync.md). Every message is
 * hostile until decoded; a frame that breaks the protocol ends this connection only.
 *
 * Frames are handled one after another in arrival order (a credit never overtakes the subscribe
 * it is for). A push waits in that order only until its blocks are handed to the store; its
 * ack is sent once they are durable, so pushes that arrive together share one durable write.
 *
 * What a client costs the server is bounded whatever it sends: the bytes of its frames not yet
 * answered (a push until its ack is sent) are at most `unansweredLimit` — the pushes a client
 * keeps unacknowledged add up to at most PUSH_WINDOW_FRAMES frames, well under it — and while
 * its socket holds more than twice the high-water mark (it reads nothing) nothing more of it is
 * handled, so what it sends then counts against that limit too.
 */
import {
  decodeBlock,
  type SealedBlock,
  sessionIdFromPublicKey,
  UNBOUND,
  verifyBlock,
} from "../../core/block.ts";
import { toBase64Url } from "../../core/bytes.ts";
import { CairnError, isCairnError } from "../../core/errors.ts";
import type { CryptoSuite } from "../../core/signing.ts";
import {
  binCost,
  CLOSE,
  decodeFrame,
  encodeFrame,
  type Frame,
  frameOverhead,
  proofMessage,
  PROTOCOL_VERSION,
  PUSH_WINDOW_FRAMES,
} from "../protocol.ts";
import type { AuthorizeRequest, Right } from "./access.ts";
import type { OpenRepository, Repositories } from "./repositories.ts";
import type { SocketHandlers, SyncSocket } from "./socket.ts";
import { type AuthorizedBlock, authorizedBlock } from "./store.ts";
import { type Outbox, Subscription, type SubscriptionLimits } from "./subscription.ts";

export interface ConnectionConfig extends SubscriptionLimits {
  readonly serverId: string;
  readonly heartbeatMs: number;
  readonly handshakeTimeoutMs: number;
  /** A writer's first block must name its repository (SyncServerOptions.boundChainsOnly). */
  readonly boundChainsOnly: boolean;
  /**
   * Subscriptions one connection may hold at once; also the most refused repositories it
   * remembers (to tell it if it may read them later), the oldest forgotten first.
   */
  readonly maxSubscriptions: number;
}

/** What a connection uses of its server. */
export interface ConnectionContext {
  readonly config: ConnectionConfig;
  readonly suite: CryptoSuite;
  readonly repositories: Repositories;
  decide(request: AuthorizeRequest): Promise<boolean>;
  /**
   * Built-in rules: the first writer of a repository without owner becomes its owner, once
   * `proven` (asked only then) says its push holds a block whose signature verifies.
   */
  claim(repository: string, publicKey: string, proven: () => Promise<boolean>): Promise<void>;
  closed(connection: Connection): void;
}

export interface ConnectionStats {
  readonly session: string | undefined;
  readonly bufferedAmount: number;
  /** The most the socket has had buffered right after a send. */
  readonly maxBufferedAmount: number;
}

/** How long a stopping server waits for a client to answer its close. */
const CLOSE_WAIT_MS = 2000;

/**
 * Bins in pushes that are not blocks of their key (undecodable, naming another session than
 * their key's, or signed by no one: their signature does not verify) a connection may send
 * before it is closed: a client pushes only blocks it sealed or verified, and each costs the
 * server a refusal in an ack, a forged one also a signature check.
 */
const MAX_NOT_BLOCKS = 1024;

/** Bytes of a client's frames the server holds unanswered at most (see the module comment). */
export function unansweredLimit(config: { highWaterMark: number; maxFrame: number }): number {
  return config.highWaterMark + 2 * PUSH_WINDOW_FRAMES * config.maxFrame;
}

type State = "hello" | "prove" | "open" | "closed";

/** Frames a client may send once welcomed. */
type ClientFrame = Extract<
  Frame,
  { type: "subscribe" | "unsubscribe" | "credit" | "push" | "ping" | "pong" }
>;

export class Connection implements SocketHandlers, Outbox {
  readonly #socket: SyncSocket;
  readonly #ctx: ConnectionContext;
  #state: State = "hello";
  #session: string | undefined;
  #publicKey = new Uint8Array(0);
  #publicKeyText = "";
  #token: string | null = null;
  #nonce = new Uint8Array(0);
  #lastHeard = Date.now();
  #pings = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  /** The frames being handled, in order. */
  #handling: Promise<void> = Promise.resolve();
  readonly #subscriptions = new Map<string, Subscription>();
  /**
   * Per repository, per author public key: may that author write? Asked once per connection,
   * and again after the rights change (`reauthorize`).
   */
  readonly #writeRights = new Map<string, Map<string, Promise<boolean>>>();
  /** Repositories this session was refused reading: told (`reset`) if it may read them later. */
  readonly #refusedReads = new Set<string>();
  /** Acks not sent yet. */
  readonly #pushes = new Set<Promise<void>>();
  /** Bytes of frames received and not yet answered (a push until its ack is sent). */
  #unanswered = 0;
  /** Bins pushed that were not blocks of their key, or forged (see MAX_NOT_BLOCKS). */
  #notBlocks = 0;
  #goingAway = false;
  #maxBuffered = 0;
  /** Resolves when the transport reports the socket closed. */
  readonly #socketClosed: Promise<void>;
  #resolveSocketClosed!: () => void;

  constructor(socket: SyncSocket, ctx: ConnectionContext) {
    this.#socket = socket;
    this.#ctx = ctx;
    this.#socketClosed = new Promise((resolve) => this.#resolveSocketClosed = resolve);
    this.#timer = setTimeout(
      () => this.#close(CLOSE.handshakeTimeout, "handshake timeout"),
      ctx.config.handshakeTimeoutMs,
    );
  }

  get stats(): ConnectionStats {
    return {
      session: this.#session,
      bufferedAmount: this.#socket.bufferedAmount,
      maxBufferedAmount: this.#maxBuffered,
    };
  }

  get bufferedAmount(): number {
    return this.#socket.bufferedAmount;
  }

  message(data: Uint8Array | string): void {
    if (this.#state === "closed") return;
    this.#lastHeard = Date.now();
    if (typeof data === "string") return this.#close(CLOSE.text, "text messages are not frames");
    if (data.length > this.#ctx.config.maxFrame) {
      return this.#close(CLOSE.tooLarge, `message over ${this.#ctx.config.maxFrame} bytes`);
    }
    let frame: Frame;
    try {
      frame = decodeFrame(data, this.#ctx.config.maxFrame);
    } catch (err) {
      return this.fail(err);
    }
    if (this.#goingAway) return; // draining: only what was received before goaway is answered
    const limit = unansweredLimit(this.#ctx.config);
    if (this.#unanswered + data.length > limit) {
      return this.fail(
        new CairnError(
          "E_TOO_LARGE",
          `over ${limit} bytes sent and not answered yet: wait for acks before pushing more`,
        ),
      );
    }
    this.#unanswered += data.length;
    const answered = () => this.#unanswered -= data.length;
    this.#handling = this.#handling
      .then(() => this.#whileNotReading())
      .then(() => this.#handle(frame, answered))
      .catch((err) => this.fail(err));
  }

  /**
   * Waits while the client reads nothing (its socket holds over twice the high-water mark), but
   * not once the server is going away: what was received is answered before it closes.
   */
  async #whileNotReading(): Promise<void> {
    const { highWaterMark, drainPollMs } = this.#ctx.config;
    const stalled = () => this.#socket.bufferedAmount > 2 * highWaterMark;
    while (this.#state !== "closed" && !this.#goingAway && stalled()) {
      await new Promise((resolve) => setTimeout(resolve, drainPollMs));
    }
  }

  closed(): void {
    this.#state = "closed";
    this.#cleanUp();
    this.#resolveSocketClosed();
  }

  send(frame: Frame): number {
    return this.#state === "closed" ? 0 : this.sendEncoded(encodeFrame(frame));
  }

  sendEncoded(bytes: Uint8Array): number {
    if (this.#state === "closed") return 0;
    this.#socket.send(bytes);
    this.#maxBuffered = Math.max(this.#maxBuffered, this.#socket.bufferedAmount);
    return bytes.length;
  }

  /**
   * Ends the connection with an error frame: protocol errors, failed proofs, bad versions, and
   * the server's own failures — a thrown value that is no CairnError (the store's driver: its
   * database unreachable) is E_IO, not the client's fault.
   */
  fail(err: unknown): void {
    const code = isCairnError(err) ? err.code : "E_IO";
    const message = err instanceof Error ? err.message : String(err);
    this.send({ type: "error", code, message });
    const close = code === "E_AUTH"
      ? CLOSE.auth
      : code === "E_UNSUPPORTED_VERSION"
      ? CLOSE.version
      : code === "E_TOO_LARGE"
      ? CLOSE.tooLarge
      : code === "E_IO"
      ? CLOSE.internal
      : CLOSE.protocol;
    this.#close(close, code);
  }

  /**
   * Sends goaway, answers the pushes in flight, then closes (1001). Resolves once the socket
   * has closed, or after CLOSE_WAIT_MS for a client that does not answer the close.
   */
  goAway(reason: string, retryAfterMs: number): Promise<void> {
    if (this.#state !== "closed" && !this.#goingAway) {
      this.#goingAway = true;
      if (this.#state === "open") this.send({ type: "goaway", reason, retryAfterMs });
      (async () => {
        await this.#handling;
        while (this.#pushes.size > 0) await Promise.all(this.#pushes);
        this.#close(CLOSE.goingAway, reason);
      })();
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise<void>((resolve) => timer = setTimeout(resolve, CLOSE_WAIT_MS));
    return Promise.race([this.#socketClosed, waited]).finally(() => clearTimeout(timer));
  }

  /**
   * The rights on `repository` (every repository when undefined) may have changed: they are
   * asked again, behind the frames already being handled. A subscriber that may no longer read
   * is unsubscribed and sent `denied`; one that was refused and now may read is sent `reset`
   * (subscribe again); a change of the right to write is told through its subscription.
   */
  reauthorize(repository: string | undefined): void {
    if (this.#state !== "open") return;
    this.#handling = this.#handling.then(() => this.#reauthorize(repository))
      .catch((err) => this.fail(err));
  }

  async #reauthorize(repository: string | undefined): Promise<void> {
    const concerns = (repo: string) => repository === undefined || repo === repository;
    for (const repo of [...this.#writeRights.keys()]) {
      if (concerns(repo)) this.#writeRights.delete(repo);
    }
    for (const [repo, subscription] of [...this.#subscriptions]) {
      if (!concerns(repo)) continue;
      const mayRead = await this.#may(repo, "read");
      const mayWrite = mayRead && await this.#may(repo, "write");
      if (this.#subscriptions.get(repo) !== subscription) continue; // ended meanwhile
      if (mayRead) subscription.rightToWrite(mayWrite);
      else {
        this.#unsubscribe(repo);
        this.#refuseReading(repo);
      }
    }
    for (const repo of [...this.#refusedReads]) {
      if (!concerns(repo) || !await this.#may(repo, "read")) continue;
      if (this.#refusedReads.delete(repo)) this.send({ type: "reset", repo });
    }
  }

  /** Handles a frame; `answered` is called once it is (a push: once its ack is sent). */
  async #handle(frame: Frame, answered: () => void): Promise<void> {
    let answeredLater = false;
    try {
      if (this.#state === "closed") return;
      if (this.#state === "hello") {
        if (frame.type !== "hello") throw outOfOrder(frame, "hello");
        return await this.#hello(frame);
      }
      if (this.#state === "prove") {
        if (frame.type !== "prove") throw outOfOrder(frame, "prove");
        return await this.#prove(frame.signature);
      }
      if (frame.type === "push") {
        await this.#push(frame, answered);
        answeredLater = true;
        return;
      }
      await this.#handleOpen(frame as Exclude<ClientFrame, { type: "push" }>);
    } finally {
      if (!answeredLater) answered();
    }
  }

  async #handleOpen(frame: Exclude<ClientFrame, { type: "push" }>): Promise<void> {
    switch (frame.type) {
      case "subscribe":
        return await this.#subscribe(frame);
      case "unsubscribe":
        this.#refusedReads.delete(frame.repo);
        return this.#unsubscribe(frame.repo);
      case "credit":
        return this.#subscriptions.get(frame.repo)?.addCredit(frame.bytes);
      case "ping":
        // A client that pings without reading is not answered: pongs must not pile up here.
        if (this.bufferedAmount < this.#ctx.config.highWaterMark) {
          this.send({ type: "pong", n: frame.n });
        }
        return;
      case "pong":
        return;
      default:
        throw outOfOrder(frame, "a client frame");
    }
  }

  async #hello(frame: Extract<Frame, { type: "hello" }>): Promise<void> {
    if (!frame.versions.includes(PROTOCOL_VERSION)) {
      throw new CairnError(
        "E_UNSUPPORTED_VERSION",
        `this server speaks sync protocol version ${PROTOCOL_VERSION}`,
      );
    }
    if (await sessionIdFromPublicKey(frame.publicKey, this.#ctx.suite) !== frame.session) {
      throw new CairnError("E_AUTH", `session ${frame.session} is not its public key's`);
    }
    this.#session = frame.session;
    this.#publicKey = frame.publicKey.slice();
    this.#publicKeyText = toBase64Url(frame.publicKey);
    this.#token = frame.token;
    this.#nonce = crypto.getRandomValues(new Uint8Array(32));
    const { serverId, maxFrame, heartbeatMs } = this.#ctx.config;
    this.send({
      type: "challenge",
      version: PROTOCOL_VERSION,
      serverId,
      nonce: this.#nonce,
      limits: { maxFrame, heartbeatMs },
    });
    this.#state = "prove";
  }

  async #prove(signature: Uint8Array): Promise<void> {
    const message = proofMessage(this.#nonce, this.#ctx.config.serverId, this.#session!);
    if (!await this.#ctx.suite.ed25519.verify(this.#publicKey, signature, message)) {
      throw new CairnError("E_AUTH", "the proof does not verify with the session's public key");
    }
    if (this.#state === "closed") return;
    clearTimeout(this.#timer);
    this.#state = "open";
    this.send({ type: "welcome" });
    this.#startHeartbeat();
  }

  #startHeartbeat(): void {
    const { heartbeatMs } = this.#ctx.config;
    this.#heartbeat = setInterval(() => {
      if (Date.now() - this.#lastHeard >= 3 * heartbeatMs) {
        this.#close(CLOSE.heartbeat, "no message for three heartbeat intervals");
      } else this.send({ type: "ping", n: ++this.#pings });
    }, heartbeatMs);
  }

  #may(repository: string, right: Right): Promise<boolean> {
    return this.#ctx.decide({
      session: this.#session!,
      publicKey: this.#publicKeyText,
      token: this.#token,
      repository,
      right,
    });
  }

  async #subscribe(frame: Extract<Frame, { type: "subscribe" }>): Promise<void> {
    const { repo } = frame;
    this.#unsubscribe(repo); // subscribing again (after a reset) starts over
    this.#refusedReads.delete(repo);
    const { maxSubscriptions } = this.#ctx.config;
    if (this.#subscriptions.size >= maxSubscriptions) {
      // Each holds a repository open here: a client naming thousands would hold them all.
      this.send({
        type: "denied",
        repo,
        right: "read",
        code: "E_TOO_LARGE",
        message: `this connection is subscribed to ${maxSubscriptions} repositories, the most ` +
          "this server allows: unsubscribe one first",
      });
      return;
    }
    if (!await this.#may(repo, "read")) return this.#refuseReading(repo);
    const canWrite = await this.#may(repo, "write");
    let repository: OpenRepository | undefined;
    let subscription: Subscription | undefined;
    try {
      repository = await this.#ctx.repositories.acquire(repo);
      subscription = await Subscription.start(repository, this, this.#ctx.config, {
        cursor: frame.cursor,
        versionVector: frame.versionVector,
        canWrite,
      });
    } catch (err) {
      if (repository) this.#ctx.repositories.release(repository);
      // The store could not read this repository (unreachable, or rows that do not add up):
      // refused for it alone, so the client's other repositories on this socket keep syncing.
      if (!isCairnError(err) || err.code !== "E_IO") throw err;
      this.send({
        type: "denied",
        repo,
        right: "read",
        code: "E_IO",
        message: `the server cannot read ${repo} now: ${err.message}`,
      });
      return;
    }
    if (!subscription) return this.#ctx.repositories.release(repository);
    if (this.#state === "closed") {
      subscription.end();
      return this.#ctx.repositories.release(repository);
    }
    this.#subscriptions.set(repo, subscription);
    subscription.pump();
  }

  #refuseReading(repo: string): void {
    // Each is asked about again at every reauthorize: a bounded number, the oldest forgotten.
    if (this.#refusedReads.size >= this.#ctx.config.maxSubscriptions) {
      this.#refusedReads.delete(this.#refusedReads.values().next().value!);
    }
    this.#refusedReads.add(repo);
    this.send({
      type: "denied",
      repo,
      right: "read",
      code: "E_FORBIDDEN",
      message: `this session may not read ${repo}`,
    });
  }

  #unsubscribe(repo: string): void {
    const subscription = this.#subscriptions.get(repo);
    if (!subscription) return;
    this.#subscriptions.delete(repo);
    subscription.end();
    this.#ctx.repositories.release(subscription.repository);
  }

  /**
   * Hands the push's blocks to the store; `answered` is called once its ack is sent. Throws (and
   * then never calls `answered`) only before that: when the client pushed too many bins that are
   * not blocks.
   */
  async #push(frame: Extract<Frame, { type: "push" }>, answered: () => void): Promise<void> {
    const { repo, id, frames } = frame;
    const rejected: { index: number; code: string; message: string }[] = [];
    const decoded: { index: number; block: AuthorizedBlock; sealed: SealedBlock }[] = [];
    // Every block must fit a `blocks` or `live` frame too, whatever its overhead, or it could
    // never be sent on: refused here rather than stored.
    const largest = this.#ctx.config.maxFrame - frameOverhead(repo);
    for (let index = 0; index < frames.length; index++) {
      const bytes = frames[index];
      try {
        if (binCost(bytes.length) > largest) {
          throw new CairnError(
            "E_TOO_LARGE",
            `a block of ${bytes.length} bytes; at most ${largest} fit`,
          );
        }
        const sealed = await this.#decodePushed(bytes);
        decoded.push({ index, block: authorizedBlock(bytes, sealed), sealed });
      } catch (err) {
        if (this.#notBlocks > MAX_NOT_BLOCKS) throw err;
        rejected.push(refusal(index, err));
      }
    }
    // Signatures checked here, each once for the claim and the hook (the store checks them all).
    const verified = new Map<SealedBlock, Promise<void>>();
    const verify = (sealed: SealedBlock) => {
      let check = verified.get(sealed);
      if (!check) verified.set(sealed, check = verifyBlock(sealed, this.#ctx.suite));
      return check;
    };
    // Only a push that holds a block claims a repository nobody owns (the store verifies every
    // block later; one is verified here only when there is something to claim).
    if (decoded.length > 0) {
      await this.#ctx.claim(repo, this.#publicKeyText, async () => {
        for (const { sealed } of decoded) {
          if (await verify(sealed).then(() => true, () => false)) return true;
        }
        return false;
      });
    }
    const authorized: AuthorizedBlock[] = [];
    const indexes: number[] = [];
    for (const { index, block, sealed } of decoded) {
      try {
        const proof = () => this.#countedIfForged(verify(sealed));
        if (!await this.#mayWrite(repo, block.session, toBase64Url(block.publicKey), proof)) {
          throw new CairnError("E_FORBIDDEN", `session ${block.session} may not write ${repo}`);
        }
        if (this.#ctx.config.boundChainsOnly && block.seq === 1 && sealed.block.prev === UNBOUND) {
          throw new CairnError(
            "E_FORBIDDEN",
            `block ${block.session}/1 begins a chain bound to no repository (written by a Cairn ` +
              `from before 2026-11-27): this server takes only chains that name their repository`,
          );
        }
        authorized.push(block);
        indexes.push(index);
      } catch (err) {
        // Past MAX_NOT_BLOCKS the push is still stored, then closed unanswered (below).
        rejected.push(refusal(index, err));
      }
    }
    const repository = await this.#ctx.repositories.acquire(repo);
    const applying = repository.stored.apply(authorized);
    const acked = (async () => {
      let applied = 0;
      let duplicates = 0;
      let position = repository.stored.head();
      let forged = 0;
      try {
        const result = await applying;
        result.outcomes.forEach((outcome, i) => {
          if (outcome.status === "applied") applied++;
          else if (outcome.status === "duplicate") duplicates++;
          else {
            if (outcome.code === "E_BAD_SIGNATURE") forged++;
            rejected.push({ index: indexes[i], code: outcome.code, message: outcome.message });
          }
        });
        position = result.head;
        repository.publish(result, this.#subscriptions.get(repo));
      } catch (err) {
        for (const index of indexes) rejected.push(refusal(index, err));
      } finally {
        this.#ctx.repositories.release(repository);
      }
      try {
        this.#countNotBlocks(forged);
      } catch (err) {
        return this.fail(err); // closed: not answered
      }
      rejected.sort((a, b) => a.index - b.index);
      this.send({ type: "ack", repo, id, applied, duplicates, rejected, position });
      answered();
    })();
    this.#pushes.add(acked);
    acked.finally(() => this.#pushes.delete(acked));
  }

  /**
   * A pushed block, decoded, its session checked against its public key (the rights are asked
   * for that session and kept by that key); counts the bins that are not blocks. The signature
   * is verified by the store.
   */
  async #decodePushed(bytes: Uint8Array): Promise<SealedBlock> {
    try {
      const sealed = await decodeBlock(bytes, this.#ctx.suite);
      const { session, publicKey } = sealed.block;
      if (await sessionIdFromPublicKey(publicKey, this.#ctx.suite) !== session) {
        throw new CairnError("E_BAD_KEY", `block: session ${session} is not its public key's`);
      }
      return sealed;
    } catch (err) {
      this.#countNotBlocks(1, err);
      throw err;
    }
  }

  /** A pushed block's signature check; a forged one counts as a bin that is no block. */
  async #countedIfForged(check: Promise<void>): Promise<void> {
    try {
      await check;
    } catch (err) {
      this.#countNotBlocks(1, err);
      throw err;
    }
  }

  /** Counts bins that were not blocks of their key; throws once there were too many. */
  #countNotBlocks(count: number, cause?: unknown): void {
    this.#notBlocks += count;
    if (this.#notBlocks > MAX_NOT_BLOCKS) {
      throw new CairnError(
        "E_PROTOCOL",
        `over ${MAX_NOT_BLOCKS} pushed bins were not blocks of their key, or were forged`,
        { cause },
      );
    }
  }

  /**
   * Whether an author may write: asked once per connection, repository and author, and only once
   * `proof` (a pushed block's signature) shows the author holds the key: the hook is told who
   * writes, and a forged block naming Alice's key would feed it false "Alice writes" requests.
   */
  async #mayWrite(
    repository: string,
    session: string,
    publicKey: string,
    proof: () => Promise<void>,
  ): Promise<boolean> {
    const known = this.#writeRights.get(repository)?.get(publicKey);
    if (known) return known;
    await proof(); // a forged block throws: nothing asked, nothing kept
    let rights = this.#writeRights.get(repository);
    if (!rights) this.#writeRights.set(repository, rights = new Map());
    let decision = rights.get(publicKey);
    if (!decision) {
      decision = this.#ctx.decide({
        session,
        publicKey,
        token: publicKey === this.#publicKeyText ? this.#token : null,
        repository,
        right: "write",
      });
      rights.set(publicKey, decision);
    }
    return decision;
  }

  #close(code: number, reason: string): void {
    if (this.#state === "closed") return;
    this.#state = "closed";
    try {
      this.#socket.close(code, reason);
    } catch {
      // Closed already by the other side.
    }
    this.#cleanUp();
  }

  #cleanUp(): void {
    clearTimeout(this.#timer);
    clearInterval(this.#heartbeat);
    for (const repo of [...this.#subscriptions.keys()]) this.#unsubscribe(repo);
    this.#ctx.closed(this);
  }
}

function outOfOrder(frame: Frame, expected: string): CairnError {
  return new CairnError("E_PROTOCOL", `expected ${expected}, got ${frame.type}`);
}

function refusal(index: number, err: unknown): { index: number; code: string; message: string } {
  return isCairnError(err)
    ? { index, code: err.code, message: err.message }
    : { index, code: "E_IO", message: err instanceof Error ? err.message : String(err) };
}
