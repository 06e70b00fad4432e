/**
 * One repository's traffic between the tabs of a database, over their channel: the leader's side
 * and a follower's side. Blocks travel as the bytes the network carries and are imported with
 * the usual verification (importBlocks), so a forged or damaged block is refused whole.
 *
 * - A follower loads the repository from the leader (`load` → `loaded`: every block it holds),
 *   sends each block it seals (`push`), and keeps it until the leader says it is persisted under
 *   the database's durability mode (`persisted`); `flush()` waits for that. When a new leader
 *   takes over, the follower sends it every push not yet acknowledged (`resend()`). It imports
 *   one batch of blocks at a time, in the order they arrived, and holds the blocks sent while it
 *   loads until the loaded ones are in: a block imported before the one it follows in its chain
 *   would be refused (E_CHAIN_GAP). A block that comes after one it never got (a leader crashed
 *   between storing and sending it) makes it load the repository again (`#fillGap`).
 * - The leader imports pushes, persists them (`persist`, the repository's log flush), answers
 *   `persisted`, and sends every block that enters its repository — sealed there or pushed by a
 *   follower — to all tabs (`blocks`), which import what they lack.
 *
 * Everything that arrives is decoded strictly first; a message that fails is dropped and
 * reported (`onRefused`), never thrown into the tab. A message of another version is dropped
 * without a report: the coordinator tells of a leader of another version once.
 */
import { CairnError, isCairnError } from "../core/errors.ts";
import type { ImportReport, Repository } from "../repo/repository.ts";
import {
  decodeTabMessage,
  describeFailure,
  type ForeignLeader,
  foreignLeader,
  MAX_TAB_BLOCKS,
  type TabMessage,
} from "./tab_messages.ts";

/** The tabs' channel as a link sees it (a BroadcastChannel, or a fake in tests). */
export interface TabChannel {
  /** Posts `message` as encodeTabMessage makes it (exactly its fields, and the version). */
  post(message: TabMessage): void;
  /** Subscribes to every value posted by the other tabs; returns the unsubscribe. */
  listen(listener: (value: unknown) => void): () => void;
}

export interface RepositoryLinkOptions {
  /** This tab's id: the leader's answers name it (`from`), a follower's asks (`from`, `to`). */
  readonly tab: string;
  readonly channel: TabChannel;
  readonly repo: Repository;
  /** A message that failed to decode or to apply, for logging. */
  onRefused?(error: unknown): void;
}

export interface FollowerLinkOptions extends RepositoryLinkOptions {
  /**
   * Whether `tab` is the leader this tab follows now (the coordinator's, from heartbeats and
   * servings). Answers (`loaded`, `persisted`, `unserved`) from any other tab are dropped: an old
   * leader that has not learnt it was replaced, or any script of the origin, could otherwise
   * acknowledge a push no storage holds, or open the repository empty (its next write then
   * forks its key's chain).
   */
  isLeader(tab: string): boolean;
}

/** The origin given to importBlocks for blocks that came over the channel (never echoed). */
const FROM_CHANNEL = "tabs";

/**
 * Blocks from the database's own tabs are taken whoever wrote them (a block another tab took
 * from a sync server, by a writer that server lists): the tab that took it checked its author,
 * as the leader's log is trusted when read back. Signatures, chains and commits are still
 * checked, so a forged or damaged block is refused.
 */
const TAB_TRUST = { trustAuthors: true };

function refused(options: RepositoryLinkOptions, error: unknown): void {
  options.onRefused?.(error);
}

/**
 * Hands `onMessage` every value the channel brings that decodes as a tab message, and
 * `onRefused` the error of each that does not. A message of another version (a tab running
 * another Cairn release) is not refused but skipped; `onForeignLeader` hears that version's
 * leaders. Returns the unsubscribe.
 */
export function listenForMessages(
  channel: TabChannel,
  onMessage: (message: TabMessage) => void,
  onRefused: (error: unknown) => void,
  onForeignLeader?: (leader: ForeignLeader) => void,
): () => void {
  return channel.listen((value) => {
    let message: TabMessage;
    try {
      message = decodeTabMessage(value);
    } catch (err) {
      if (!isCairnError(err, "E_UNSUPPORTED_VERSION")) onRefused(err);
      else {
        const leader = foreignLeader(value);
        if (leader) onForeignLeader?.(leader);
      }
      return;
    }
    onMessage(message);
  });
}

/** The messages about this repository, handled; the others dropped, failures reported. */
function listenTo(
  options: RepositoryLinkOptions,
  handle: (message: TabMessage) => Promise<void> | void,
): () => void {
  const report = (err: unknown) => refused(options, err);
  return listenForMessages(options.channel, (message) => {
    if ("repo" in message && message.repo !== options.repo.path) return;
    Promise.resolve().then(() => handle(message)).catch(report);
  }, report);
}

/** Bytes of blocks one `loaded` carries at most (besides MAX_TAB_BLOCKS). */
const LOADED_BYTES = 8 << 20;

/** A repository's blocks cut into `loaded` messages: at least one, the last possibly empty. */
function inChunks(frames: readonly Uint8Array[]): Uint8Array[][] {
  const chunks: Uint8Array[][] = [[]];
  let bytes = 0;
  for (const frame of frames) {
    const chunk = chunks[chunks.length - 1];
    if (
      chunk.length === MAX_TAB_BLOCKS || (chunk.length > 0 && bytes + frame.length > LOADED_BYTES)
    ) {
      chunks.push([frame]);
      bytes = frame.length;
    } else {
      chunk.push(frame);
      bytes += frame.length;
    }
  }
  return chunks;
}

/** Sends every tab `frames` of repository `repo` as `blocks` from `from`, in bounded messages. */
export function postBlocks(
  channel: TabChannel,
  from: string,
  repo: string,
  frames: readonly Uint8Array[],
): void {
  if (frames.length === 0) return;
  for (const chunk of inChunks(frames)) channel.post({ type: "blocks", from, repo, frames: chunk });
}

/** Imports blocks from the channel into a repository one batch at a time, in the order asked. */
class ImportsInTurn {
  readonly #repo: Repository;
  #last: Promise<unknown> = Promise.resolve();

  constructor(repo: Repository) {
    this.#repo = repo;
  }

  import(frames: Uint8Array[]): Promise<ImportReport> {
    const imported = this.#last.then(() =>
      this.#repo.importBlocks(frames, FROM_CHANNEL, TAB_TRUST)
    );
    this.#last = imported.catch(() => {});
    return imported;
  }

  /** Resolves once every import asked for so far has ended (never rejects). */
  done(): Promise<unknown> {
    return this.#last;
  }
}

function post(options: RepositoryLinkOptions, message: TabMessage): void {
  options.channel.post(message);
}

/**
 * Tells the follower that sent `message` (a `load` or `push`) that leader `from` cannot serve
 * it.
 */
export function unserved(
  channel: TabChannel,
  from: string,
  message: TabMessage,
  err: unknown,
): void {
  if (message.type !== "load" && message.type !== "push") return;
  const { from: to, repo, id } = message;
  channel.post({ type: "unserved", from, to, repo, id, error: describeFailure(err) });
}

/** The leader's side: serves loads, persists pushes, sends every new block to all tabs. */
export class LeaderRepositoryLink {
  #options: RepositoryLinkOptions;
  #persist: () => Promise<void>;
  #reopen: ((message: TabMessage) => void) | undefined;
  /**
   * The leader is leaving (stopAnswering, close): a push that finds the repository closed is
   * left for the next leader.
   */
  #leaving = false;
  /** The pushes' imports, one after another in the order the pushes came. */
  readonly #imports: ImportsInTurn;
  readonly #stopListening: () => void;
  readonly #stopSending: () => void;

  /**
   * `reopen` takes a push that found the repository closed by the leader's own page (not by the
   * leader leaving): the leader opens it again and handles the push there (TabLeader). Without
   * it, such a push is not answered, as when the leader leaves.
   */
  constructor(
    options: RepositoryLinkOptions,
    persist: () => Promise<void>,
    reopen?: (message: TabMessage) => void,
  ) {
    this.#options = options;
    this.#persist = persist;
    this.#reopen = reopen;
    const { repo, tab } = options;
    this.#imports = new ImportsInTurn(repo);
    this.#stopListening = listenTo(options, (message) => this.#handle(message));
    this.#stopSending = repo.onBlock((block) => {
      post(options, { type: "blocks", from: tab, repo: repo.path, frames: [block.bytes()] });
    });
  }

  /** A message about this repository that arrived before the link was made (see TabLeader). */
  receive(message: TabMessage): Promise<void> {
    return this.#handle(message);
  }

  async #handle(message: TabMessage): Promise<void> {
    const { repo } = this.#options;
    if (message.type === "load") {
      let frames: Uint8Array[];
      try {
        // After the pushes that came before the load: a tab that took the key of a page that
        // just went loads its last pushes too. Without them it sealed its next write where
        // the last of them stands in the key's chain, and every write of its after that
        // was refused as a fork.
        await this.#imports.done();
        frames = await repo.exportBlocks();
      } catch (err) {
        if (!repo.closed) unserved(this.#options.channel, this.#options.tab, message, err);
        throw err;
      }
      const chunks = inChunks(frames);
      chunks.forEach((frames, i) => {
        post(this.#options, {
          type: "loaded",
          from: this.#options.tab,
          to: message.from,
          repo: repo.path,
          id: message.id,
          frames,
          last: i === chunks.length - 1,
        });
      });
    } else if (message.type === "push") {
      let error: string | null = null;
      try {
        // In turn: a push whose signature checks ended before the one before it in its chain
        // would be refused (E_CHAIN_GAP), and that follower's flush would fail.
        const report = await this.#imports.import(message.frames);
        const refusals = report.rejected.map(({ error }) => error);
        if (refusals.length > 0 && refusals.every((err) => isCairnError(err, "E_CHAIN_GAP"))) {
          // Blocks after ones this leader lacks: a follower sealed them as this tab took the
          // lead, before it heard this tab serve and sent again what the last leader left
          // unanswered (these with it, in order). Refused, they would fail its flush for a write
          // that is then stored; unanswered, the resend is answered.
          await this.#persist();
          return;
        }
        if (refusals.length > 0) error = describeFailure(refusals[0]);
        else await this.#persist();
      } catch (err) {
        error = describeFailure(err);
      }
      if (repo.closed) {
        // The leader leaving: no answer, so the follower sends it to the next leader. The page
        // closing the repository: opened again for the push (this link retired meanwhile).
        if (!this.#leaving) this.#reopen?.(message);
        return;
      }
      post(this.#options, {
        type: "persisted",
        from: this.#options.tab,
        to: message.from,
        repo: repo.path,
        id: message.id,
        error,
      });
    }
  }

  /**
   * Answers nothing more, but still sends the tabs every block that enters: what the closing
   * page's flush stores (its last writes, a push being written) must reach them, or they would
   * refuse every later block built on it.
   */
  stopAnswering(): void {
    if (this.#leaving) return;
    this.#leaving = true;
    this.#stopListening();
  }

  /**
   * Replaced by a link on the repository the leader's page opened again: hears and sends nothing
   * more, and hands the pushes it was importing to the new link (`reopen`).
   */
  retire(): void {
    this.#stopListening();
    this.#stopSending();
  }

  close(): void {
    this.stopAnswering();
    this.#stopSending();
  }
}

interface UnacknowledgedPush {
  readonly frames: Uint8Array[];
  /** The leader answered that it could not persist it: sent again by the next flush. */
  failed: boolean;
}

/**
 * An `acknowledged()` waiting for every push up to id `upTo`. One per call, not one per call
 * and push: a writer that commits each write without awaiting it made as many waits as writes,
 * each on every push still unanswered (1,200 writes held 275 MB while the leader was slow).
 */
interface AcknowledgedWait {
  readonly upTo: number;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * The id of a follower's next `load` or `push`, shared by every link of the page: a link made
 * when the page opens a repository again must not take an id an answer to the link before it
 * still carries (that answer would acknowledge a push never persisted).
 */
let nextMessageId = 1;

/** A follower's side: loads from the leader, pushes what it seals, imports everyone's blocks. */
export class FollowerRepositoryLink {
  #options: FollowerLinkOptions;
  #unacknowledged = new Map<number, UnacknowledgedPush>();
  /**
   * In the order made, which is the order they settle in: a wait made later waits for no push
   * below one an earlier wait still waits for (ids grow, and a push acknowledged is gone).
   */
  #waits: AcknowledgedWait[] = [];
  /**
   * Loads asked for, with the blocks their `loaded` messages brought so far; `resolve` is handed
   * the import of them all.
   */
  #loads = new Map<
    number,
    { frames: Uint8Array[]; resolve(imported: Promise<void>): void; reject(err: unknown): void }
  >();
  /** The imports queued so far: each starts once the one before it is done. */
  readonly #imports: ImportsInTurn;
  /** Blocks other tabs sent while a load was waiting for its answer, in arrival order. */
  #held: Uint8Array[][] = [];
  /** Blocks refused for a gap before them, to import again once the gap is filled (#fillGap). */
  #gapped: Uint8Array[] = [];
  /** Whether a load to fill a gap is waiting for its answer. */
  #filling = false;
  #stop: (() => void)[];

  constructor(options: FollowerLinkOptions) {
    this.#options = options;
    const { repo } = options;
    this.#imports = new ImportsInTurn(repo);
    this.#stop = [
      listenTo(options, (message) => this.#handle(message)),
      repo.onBlock((block) => {
        if (block.origin === FROM_CHANNEL) return;
        const id = nextMessageId++;
        const frames = [block.bytes()];
        this.#unacknowledged.set(id, { frames, failed: false });
        this.#push(id, frames);
      }),
    ];
  }

  /** How many pushes the leader has not yet acknowledged. */
  get unacknowledged(): number {
    return this.#unacknowledged.size;
  }

  /**
   * Asks the leader for every block of the repository and imports them. Resolves once they are
   * applied; call again (after `resend`) when the leader changed before it answered.
   */
  async load(): Promise<void> {
    const id = nextMessageId++;
    await new Promise<void>((resolve, reject) => {
      this.#loads.set(id, { frames: [], resolve, reject });
      this.#postLoad(id);
    });
  }

  /**
   * Imports blocks another tab sent, in turn; reports those refused. Never rejects. A block
   * after one this tab lacks (E_CHAIN_GAP) is not refused for good: the tab fills the gap
   * (`#fillGap`) and imports it again.
   */
  async #importSent(frames: Uint8Array[], fill = true): Promise<void> {
    try {
      const report = await this.#imports.import(frames);
      const gapped: Uint8Array[] = [];
      for (const { index, error } of report.rejected) {
        if (fill && isCairnError(error, "E_CHAIN_GAP")) gapped.push(frames[index]);
        else refused(this.#options, error);
      }
      if (gapped.length > 0) this.#fillGap(gapped);
    } catch (err) {
      if (!this.#options.repo.closed) refused(this.#options, err);
    }
  }

  /**
   * Blocks came that follow blocks this tab never got (a leader's last ones, sent by no tab: it
   * crashed between storing and sending them). Refused, they would leave every later block of
   * their session refused too, for the tab's life; so the tab loads the repository again from
   * the leader, as at open (the leader holds what it sends, and what it stored), then imports
   * them again, reporting those still refused. One load at a time: gaps met meanwhile wait for it.
   */
  #fillGap(gapped: Uint8Array[]): void {
    this.#gapped.push(...gapped);
    if (this.#filling) return;
    this.#filling = true;
    const again = () => {
      this.#filling = false;
      return this.#gapped.splice(0);
    };
    this.load().then(
      () => this.#importSent(again(), false),
      (err) => {
        again();
        refused(this.#options, err);
      },
    );
  }

  #postLoad(id: number): void {
    post(this.#options, {
      type: "load",
      from: this.#options.tab,
      repo: this.#options.repo.path,
      id,
    });
  }

  /** Resolves when every block sealed so far is persisted by the leader; rejects if it refused one. */
  async flush(): Promise<void> {
    await this.#options.repo.flush(); // seals what is pending, which pushes it
    await this.acknowledged();
  }

  /**
   * Resolves when every block pushed so far is persisted by the leader; rejects if it refused
   * one. What a tab's repository waits for after sealing (its `persisted`). A push the leader
   * could not persist is sent again first, as one tab's flush writes again what failed.
   */
  async acknowledged(): Promise<void> {
    // From the first failed push on, every push goes again, in order: the leader leaves a push
    // that follows a block it lacks unanswered (see LeaderRepositoryLink).
    let resending = false;
    for (const [id, push] of this.#unacknowledged) {
      resending ||= push.failed;
      if (!resending) continue;
      push.failed = false;
      this.#push(id, push.frames);
    }
    let upTo = 0;
    for (const id of this.#unacknowledged.keys()) upTo = id; // ids grow: the last is the largest
    if (upTo === 0) return;
    await new Promise<void>((resolve, reject) => this.#waits.push({ upTo, resolve, reject }));
  }

  /**
   * This tab takes the lead: the stored repository (`stored`, persisted by `persist`) is given
   * every block of other sessions this tab holds that it lacks, and they are persisted, before
   * any tab is served.
   * Such blocks are the old leader's own, sent to the tabs when sealed and lost with it when it
   * crashed before persisting them: without them, the next tab to take the old leader's key
   * would load a chain that ends before them and seal another block in their place, a fork of
   * that key's chain against every tab holding them.
   *
   * Returns the blocks the storage holds that this tab lacks, for the new leader to send to
   * every tab once it serves: blocks the old leader's log held but that it never sent (it
   * crashed between the two), which the tabs would lack, refusing every later block built on
   * them (E_CHAIN_GAP).
   */
  async handOver(stored: Repository, persist: () => Promise<void>): Promise<Uint8Array[]> {
    const { repo } = this.#options;
    // Not exportBlocks: it waits for this tab's pending writes, which wait for this tab to serve.
    // Those come as pushes once it serves, and go on to every tab from there: imported here, they
    // would be duplicates then, sent to no tab.
    const frames = await repo.exportOthersHeldBlocks(stored.versionVector());
    if (frames.length > 0) {
      const report = await stored.importBlocks(frames, FROM_CHANNEL, TAB_TRUST);
      for (const { error } of report.rejected) refused(this.#options, error);
      await persist();
    }
    return await stored.exportBlocks(repo.versionVector());
  }

  /** The path of the repository linked. */
  get path(): string {
    return this.#options.repo.path;
  }

  /**
   * A new leader took over: sends it every push the old one did not acknowledge, in order, and
   * asks again for the loads the old one did not answer. With neither, an empty push tells it
   * the repository is open here, so it opens it too (and syncs it, when it syncs).
   */
  resend(): void {
    for (const [id, push] of this.#unacknowledged) this.#push(id, push.frames);
    for (const id of this.#loads.keys()) this.#postLoad(id);
    if (this.#unacknowledged.size === 0 && this.#loads.size === 0) this.#push(nextMessageId++, []);
  }

  #push(id: number, frames: Uint8Array[]): void {
    const { tab, repo } = this.#options;
    post(this.#options, { type: "push", from: tab, repo: repo.path, id, frames });
  }

  async #handle(message: TabMessage): Promise<void> {
    const { tab, repo } = this.#options;
    const answer = message.type === "loaded" || message.type === "persisted" ||
      message.type === "unserved";
    // Not reported: an old leader's late answers are no fault (it asks the new one again).
    if (answer && (message.to !== tab || !this.#options.isLeader(message.from))) return;
    if (message.type === "loaded") {
      const load = this.#loads.get(message.id);
      if (!load) return;
      load.frames.push(...message.frames);
      if (!message.last) return;
      this.#loads.delete(message.id);
      const imported = this.#imports.import(load.frames);
      // Blocks sent meanwhile may follow the loaded ones: imported after them, and before the
      // load resolves.
      const held = this.#loads.size > 0 ? [] : this.#held.splice(0);
      load.resolve(
        Promise.all([imported, ...held.map((frames) => this.#importSent(frames))]).then(
          () => {},
        ),
      );
    } else if (message.type === "persisted") {
      const { id, error } = message;
      this.#answered(id, error === null ? null : `did not persist: ${error}`);
    } else if (message.type === "unserved") {
      const reason = `could not open ${repo.path}: ${message.error}`;
      const load = this.#loads.get(message.id);
      if (!load) return this.#answered(message.id, reason);
      this.#loads.delete(message.id);
      load.reject(new CairnError("E_IO", `the leader tab ${reason}`));
    } else if (message.type === "blocks" && !repo.closed) {
      if (this.#loads.size > 0) this.#held.push(message.frames);
      else await this.#importSent(message.frames);
    }
  }

  /** The leader's answer to push `id`: persisted (`failure` null), or not: kept to send again. */
  #answered(id: number, failure: string | null): void {
    const push = this.#unacknowledged.get(id);
    if (!push) return;
    if (failure === null) {
      this.#unacknowledged.delete(id);
      // Settled: the waits made before every push still unanswered.
      const first = this.#unacknowledged.keys().next();
      const settled = first.done ? Infinity : first.value;
      let done = 0;
      while (done < this.#waits.length && this.#waits[done].upTo < settled) done++;
      for (const wait of this.#waits.splice(0, done)) wait.resolve();
      return;
    }
    // Kept: until the leader persists it, the block is in no storage.
    push.failed = true;
    const err = new CairnError("E_IO", `the leader tab ${failure}`);
    const waitingForIt = this.#waits.filter((wait) => wait.upTo >= id);
    this.#waits = this.#waits.filter((wait) => wait.upTo < id);
    for (const wait of waitingForIt) wait.reject(err);
  }

  /**
   * The tab that leads runs another version of Cairn (`err`): loads waiting for it fail, and so
   * do flushes waiting for pushes, which are kept: sent to the next leader of this version when
   * it announces that it serves (`resend`).
   */
  cannotBeServed(err: CairnError): void {
    for (const load of this.#loads.values()) load.reject(err);
    this.#loads.clear();
    const waits = this.#waits;
    this.#waits = [];
    for (const wait of waits) wait.reject(err);
  }

  close(): void {
    for (const stop of this.#stop) stop();
  }
}
