/**
 * One tab's part in the tabs of a stored database (docs/browser.md, "Many tabs"). At open the
 * tab claims a key index from the pool (key_pool.ts) and joins the election (election.ts):
 *
 * - **Leading at open** (the usual single tab): the tab's database is the stored one, and a
 *   TabLeader serves the other tabs from it (`lead`). Losing the lead later (another tab stole it
 *   while this one was frozen) ends it: `tookOver` closes the database.
 * - **Following**: the tab's database lives in memory; it asks the leader for the stored secret
 *   (`welcome`), and each repository it opens is loaded from the leader and linked to it
 *   (`follow`). When this tab is granted the lead later (the leader closed, crashed, or froze),
 *   it opens the stored database beside its own (`openPersister`, retried until the old leader's
 *   files are free), persists there the blocks it holds that the storage lacks (a crashed
 *   leader's, sent before it persisted them), and serves every tab from it, its own included,
 *   over a channel of its own.
 *
 * Whenever a leader announces that it serves (`serving`), followers send it again their
 * unacknowledged pushes and their unanswered loads and joins. A follower takes answers (welcome,
 * loaded, persisted, flushed) only from the leader it knows, by the highest term heard in
 * heartbeats and servings: not from a leader that lost the lead and has not learnt it, nor from
 * any other script of the origin. That is a defence against stray and buggy tabs, not a
 * security boundary: a same-origin script may post as the leader, or delete OPFS outright.
 *
 * The tab that serves also answers other tabs' questions about its connections to sync servers
 * (`sync-ask`, `sync-wait`) through the responders src/sync registers (`answerSync`), and says
 * `sync-absent` for a server it holds no connection to.
 */
import { CairnError, isCairnError } from "../core/errors.ts";
import type { Repository } from "../repo/repository.ts";
import { Election, HEARTBEAT_MS, PROBE_AFTER_MS, STEAL_AFTER_MS } from "./election.ts";
import { claimPoolKey } from "./key_pool.ts";
import type { HeldLock, LockManagerLike } from "./locks.ts";
import {
  FollowerRepositoryLink,
  listenForMessages,
  postBlocks,
  type TabChannel,
} from "./repository_link.ts";
import { type PersistingDatabase, TabLeader } from "./tab_leader.ts";
import { MAX_TABS } from "./tab_keys.ts";
import {
  describeFailure,
  type ForeignLeader,
  MAX_TERM,
  TAB_PROTOCOL,
  type TabMessage,
} from "./tab_messages.ts";

/** A stored database the coordinator serves from after a promotion, and closes with it. */
export interface Persister extends PersistingDatabase {
  close(): Promise<void>;
}

/** What answers the other tabs about one sync server while this tab serves (src/sync). */
export interface SyncResponder {
  /** Posts this tab's status for the server (`sync-status`). */
  tellStatus(): void;
  /** Resolves once the server holds every block this tab's stored database holds now. */
  synced(): Promise<void>;
}

export interface TabEnvironment {
  readonly directory: string;
  readonly locks: LockManagerLike;
  /** A new channel object of the database (BroadcastChannel delivers between objects of one tab). */
  openChannel(): TabChannel & { close(): void };
  now(): number;
  visible(): boolean;
  /** Opens the stored database to serve from (after a promotion); E_LOCKED while it is held. */
  openPersister(): Promise<Persister>;
  /** This tab led at open and another tab took the lead: its stored database must close. */
  tookOver(): void;
  /**
   * This tab serves from `persister` after a promotion (called once it serves), or no longer
   * does (undefined, before the persister closes).
   */
  servingFrom(persister: Persister | undefined): void;
  /** A message or block refused, or a failure the tab carried on after, for logging. */
  onRefused(error: unknown): void;
}

const RETRY_FIRST_MS = 50;
const RETRY_LAST_MS = 1_000;

interface Promotion {
  readonly persister: Persister;
  readonly leader: TabLeader;
  readonly channel: TabChannel & { close(): void };
}

export class TabCoordinator {
  readonly tab = randomTabId();
  readonly keyIndex: number;
  readonly #environment: TabEnvironment;
  readonly #keyLock: HeldLock;
  /** The tab's own channel object: its links, joins and heartbeats heard from others. */
  readonly #channel: TabChannel & { close(): void };
  readonly #election: Election;
  readonly #links = new Set<FollowerRepositoryLink>();
  readonly #stop: (() => void)[] = [];
  /** True while `join` decides: a lead granted then is the caller's to take up (`lead`). */
  #opening = true;
  /** While `join` waits for the leader's answer: the lead was granted first. */
  #granted: ((value: undefined) => void) | undefined;
  /** Serving from the database the caller opened (led at open). */
  #ledAtOpen: TabLeader | undefined;
  /** The leader stopServing stopped: it sends the tabs what the closing database stores. */
  #leaving: TabLeader | undefined;
  /** Serving after a promotion, from a persister, over a channel object of its own. */
  #promotion: Promise<Promotion> | undefined;
  /** The promotion once it serves. */
  #promoted: Promotion | undefined;
  readonly #responders = new Map<string, SyncResponder>();
  #welcome:
    | { id: number; resolve(secret: Uint8Array): void; reject(err: unknown): void }
    | undefined;
  /** This tab's `flush` asks the leader has not answered, by id (asked again of a new leader). */
  readonly #flushes = new Map<number, { resolve(): void; reject(err: unknown): void }>();
  #nextId = 1;
  /**
   * The leader of this version this tab follows: the tab a `serving`, or a heartbeat, of the
   * highest term heard named (at one term, the first heartbeat's, or a later `serving`'s), and
   * when it was last heard. Answers are taken only from it.
   */
  #leader: { tab: string; term: number; heardAt: number } | undefined;
  /**
   * Heartbeats of another version heard while no leader of this one was (#heardForeignLeader):
   * since when, and the last.
   */
  #foreign: { since: number; last: number } | undefined;
  /** A welcome came before any leader was heard: asked again once one is (#heardLeader). */
  #welcomeEarly = false;
  /** The version of the leader of another version last heard, once reported (onRefused). */
  #foreignProtocol: number | undefined;
  #closed = false;

  private constructor(environment: TabEnvironment, keyIndex: number, keyLock: HeldLock) {
    this.#environment = environment;
    this.keyIndex = keyIndex;
    this.#keyLock = keyLock;
    this.#channel = environment.openChannel();
    this.#election = new Election(environment.directory, environment, {
      becameLeader: () => this.#becameLeader(),
      lostLead: () => this.#lostLead(),
      sendHeartbeat: (term) => this.#channel.post({ type: "heartbeat", leader: this.tab, term }),
      sendProbe: () => this.#channel.post({ type: "probe", from: this.tab }),
      failed: (err) => this.#environment.onRefused(err),
    });
    // A message that does not decode is reported by the links and the leader, which see it too.
    this.#stop.push(listenForMessages(
      this.#channel,
      (message) => this.#heard(message),
      () => {},
      (leader) => this.#heardForeignLeader(leader),
    ));
    const ticker = setInterval(() => this.#election.tick(), HEARTBEAT_MS);
    this.#stop.push(() => clearInterval(ticker));
  }

  /**
   * Claims a key index and joins the election. When this tab leads (`leads`), the caller opens
   * the stored database and calls `lead`; otherwise `storedSecret` is the leader's answer. A tab
   * that finds the lead held waits for whichever comes first, the leader's answer or the lead
   * itself: a reloaded page whose old self still held the lock a moment longer then leads with
   * the storage as its own database, rather than taking over beside it.
   */
  static async join(
    environment: TabEnvironment,
  ): Promise<{ coordinator: TabCoordinator; leads: boolean; storedSecret?: Uint8Array }> {
    const key = await claimPoolKey(environment.locks, environment.directory, MAX_TABS);
    if (key.index >= MAX_TABS) {
      key.lock.release();
      throw new CairnError(
        "E_LOCKED",
        `${environment.directory} is open in ${MAX_TABS} tabs already, the most it may be`,
      );
    }
    const coordinator = new TabCoordinator(environment, key.index, key.lock);
    if (await coordinator.#election.start()) {
      coordinator.#opening = false;
      return { coordinator, leads: true };
    }
    const granted = new Promise<undefined>((resolve) => coordinator.#granted = resolve);
    let storedSecret: Uint8Array | undefined;
    try {
      storedSecret = await Promise.race([coordinator.#askToJoin(), granted]);
    } catch (err) {
      await coordinator.close(); // the lead is held by a tab of another version
      throw err;
    }
    coordinator.#welcome = undefined;
    coordinator.#opening = false;
    return { coordinator, leads: storedSecret === undefined, storedSecret };
  }

  /** The database's directory. */
  get directory(): string {
    return this.#environment.directory;
  }

  /** Led at open: serves the other tabs from the database the caller opened. */
  lead(database: PersistingDatabase): void {
    this.#ledAtOpen = new TabLeader(this.tab, this.#channel, database, this.#environment.onRefused);
    this.#announce(this.#channel);
  }

  /** The stored session's secret, from the leader (asked again as leaders change). */
  #askToJoin(): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      this.#welcome = { id: this.#nextId++, resolve, reject };
      this.#askWelcome();
    });
  }

  /** Whether `tab` is the leader of this version this tab follows (by the highest term heard). */
  isLeader(tab: string): boolean {
    return this.#leader?.tab === tab;
  }

  /**
   * Following: loads a repository from the leader and keeps it linked (pushes, everyone's
   * blocks) until `unfollow` or close. Resolves once loaded.
   */
  async follow(repo: Repository): Promise<FollowerRepositoryLink> {
    const link = new FollowerRepositoryLink({
      tab: this.tab,
      channel: this.#channel,
      repo,
      onRefused: this.#environment.onRefused,
      isLeader: (tab) => this.isLeader(tab),
    });
    this.#links.add(link);
    try {
      await link.load();
    } catch (err) {
      this.unfollow(link);
      throw err;
    }
    return link;
  }

  /**
   * Following: resolves once the tab that serves has made everything it stored durable (fsync,
   * whatever the durability mode), for `db.flush()`; rejects with E_IO if it could not. Asked
   * again of each new leader until one answers.
   */
  flushLeader(): Promise<void> {
    if (this.#closed) return Promise.reject(closedError());
    return new Promise((resolve, reject) => {
      const id = this.#nextId++;
      this.#flushes.set(id, { resolve, reject });
      this.#post({ type: "flush", from: this.tab, id });
    });
  }

  unfollow(link: FollowerRepositoryLink): void {
    link.close();
    this.#links.delete(link);
  }

  /**
   * Answers the other tabs about the sync server at `url` with `responder` while this tab
   * serves. Returns the function that stops it.
   */
  answerSync(url: string, responder: SyncResponder): () => void {
    this.#responders.set(url, responder);
    return () => {
      if (this.#responders.get(url) === responder) this.#responders.delete(url);
    };
  }

  /**
   * Stops serving from the database the caller opened (it is closing): followers wait for the
   * next leader. Blocks its close stores still go to them, until close().
   */
  stopServing(): void {
    // Called again by the close a lost lead started (#lostLead): the leaver stays the one
    // sending.
    if (!this.#ledAtOpen) return;
    this.#ledAtOpen.stopAnswering();
    this.#leaving = this.#ledAtOpen;
    this.#ledAtOpen = undefined;
  }

  /** Leaves: the lead and the key index go to other tabs; a persister opened here is closed. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const { reject } of this.#flushes.values()) reject(closedError());
    this.#flushes.clear();
    for (const stop of this.#stop) stop();
    for (const link of this.#links) link.close();
    this.#links.clear();
    this.#ledAtOpen?.close();
    this.#leaving?.close();
    await this.#endPromotion();
    this.#election.close();
    this.#keyLock.release();
    this.#channel.close();
  }

  /** Tells every tab that this one serves, in `term`: they send again what waits. */
  #announce(channel: TabChannel): void {
    channel.post(
      { type: "serving", leader: this.tab, term: this.#election.term },
    );
  }

  #askWelcome(): void {
    const welcome = this.#welcome;
    if (!welcome) return;
    // The leader answers a probe with a heartbeat at once: its welcome is taken once this tab
    // knows it (#leader), and asked again then if it came first.
    if (!this.#leader) this.#channel.post({ type: "probe", from: this.tab });
    this.#channel.post({ type: "join", from: this.tab, id: welcome.id });
  }

  /**
   * A heartbeat or a `serving` of this version: the tab it names is the leader this tab follows
   * if its term is the highest heard (returns whether it is).
   */
  #heardLeader(tab: string, term: number, serving: boolean): boolean {
    if (term > MAX_TERM) return false; // forged: no tab sends it (election.ts)
    const known = this.#leader;
    if (known && (term < known.term || (term === known.term && known.tab !== tab && !serving))) {
      return false; // an old leader that has not learnt it was replaced, or a stray
    }
    this.#leader = { tab, term, heardAt: this.#environment.now() };
    this.#foreign = undefined;
    this.#foreignProtocol = undefined;
    // A welcome that came before its leader's heartbeat was dropped: asked again (a `serving`
    // asks everything again).
    if (this.#welcomeEarly && !serving) this.#askWelcome();
    this.#welcomeEarly = false;
    return true;
  }

  #heard(message: TabMessage): void {
    if (message.type === "heartbeat") {
      this.#heardLeader(message.leader, message.term, false);
      this.#election.heardHeartbeat(message.term);
    } else if (message.type === "probe") {
      this.#election.heardProbe();
    } else if (message.type === "serving") {
      if (!this.#heardLeader(message.leader, message.term, true)) return;
      this.#election.heardHeartbeat(message.term);
      this.#askWelcome();
      for (const link of this.#links) link.resend();
      for (const id of this.#flushes.keys()) this.#post({ type: "flush", from: this.tab, id });
    } else if (message.type === "sync-ask" || message.type === "sync-wait") {
      this.#answerSync(message);
    } else if (message.type === "welcome" || message.type === "flushed") {
      if (message.to !== this.tab) return;
      // Answers count only from the leader this tab follows.
      if (message.from === this.#leader?.tab) this.#answered(message);
      else if (message.type === "welcome" && !this.#leader) this.#welcomeEarly = true;
    }
  }

  #answered(message: Extract<TabMessage, { type: "welcome" | "flushed" }>): void {
    if (message.type === "welcome") {
      if (message.id !== this.#welcome?.id) return;
      const { resolve } = this.#welcome;
      this.#welcome = undefined;
      resolve(message.secret);
      return;
    }
    const flush = this.#flushes.get(message.id);
    this.#flushes.delete(message.id);
    if (message.error === null) flush?.resolve();
    else {
      flush?.reject(
        new CairnError(
          "E_IO",
          `the tab that serves the database could not flush: ${message.error}`,
        ),
      );
    }
  }

  /**
   * A heartbeat of another version (a page of the app loaded before or after a deploy, with
   * another release of Cairn). It means that release leads, and this tab cannot follow it, only
   * when no leader of this version is heard: one message of the kind proves nothing (a page that
   * lost the lead, a stray script of the origin), and a leader of this version heard within
   * PROBE_AFTER_MS serves, whatever else is posted. So the first such heartbeat while none is
   * heard asks for one (a probe, which a leader of this version answers at once), and only one
   * PROBE_AFTER_MS later, still without an answer, settles it: an open waiting fails, and so do loads
   * and flushes, with E_UNSUPPORTED_VERSION; writes stay kept for the next leader of this
   * version. Each such heartbeat counts as hearing a leader (no steal from a leader alive).
   */
  #heardForeignLeader({ protocol, term }: ForeignLeader): void {
    if (this.#closed || this.#election.role !== "follower") return;
    const now = this.#environment.now();
    if (this.#leader && now - this.#leader.heardAt < PROBE_AFTER_MS) return;
    // Not its term yet: a forged one far ahead would have this tab ignore its leader's.
    this.#election.heardHeartbeat(this.#election.term);
    const foreign = this.#foreign;
    if (!foreign || now - foreign.last >= STEAL_AFTER_MS) {
      this.#foreign = { since: now, last: now };
      this.#post({ type: "probe", from: this.tab });
      return;
    }
    foreign.last = now;
    // The probe unanswered as long as a follower waits for a heartbeat before it probes: a
    // leader of this version answers at once, however its timers are throttled.
    if (now - foreign.since < PROBE_AFTER_MS) return;
    this.#election.heardHeartbeat(term);
    const err = foreignLeaderError(this.#environment.directory, protocol);
    if (this.#foreignProtocol !== protocol) {
      this.#foreignProtocol = protocol;
      this.#environment.onRefused(err);
    }
    const welcome = this.#welcome;
    this.#welcome = undefined;
    welcome?.reject(err);
    for (const { reject } of this.#flushes.values()) reject(err);
    this.#flushes.clear();
    for (const link of this.#links) link.cannotBeServed(err);
  }

  #answerSync(message: Extract<TabMessage, { type: "sync-ask" | "sync-wait" }>): void {
    if (!this.#ledAtOpen && !this.#promoted) return; // the tab that serves answers
    const responder = this.#responders.get(message.url);
    if (!responder) {
      this.#post({ type: "sync-absent", to: message.from, url: message.url });
    } else if (message.type === "sync-ask") {
      responder.tellStatus();
    } else {
      const { from: to, url, id } = message;
      responder.synced().then(
        () => this.#post({ type: "sync-done", to, url, id, error: null }),
        // The connection closed meanwhile: the asking tab connects itself and waits on that.
        (err) =>
          this.#post(
            isCairnError(err, "E_CLOSED")
              ? { type: "sync-absent", to, url }
              : { type: "sync-done", to, url, id, error: describeFailure(err) },
          ),
      );
    }
  }

  #post(message: TabMessage): void {
    if (!this.#closed) this.#channel.post(message);
  }

  #becameLeader(): void {
    if (this.#opening) {
      this.#granted?.(undefined); // led at open: the caller takes it up
      return;
    }
    if (this.#closed) return;
    const promotion = this.#promote();
    this.#promotion = promotion;
    promotion.catch((err) => {
      if (this.#promotion === promotion) this.#promotion = undefined;
      this.#environment.onRefused(err);
    });
  }

  async #promote(): Promise<Promotion> {
    const persister = await this.#openPersisterPatiently();
    if (this.#closed || this.#election.role !== "leader") {
      await persister.close();
      throw new CairnError("E_CLOSED", "the tab stopped leading while it opened the database");
    }
    const unsent = new Map<string, Uint8Array[]>();
    for (const link of this.#links) {
      try {
        const { repo, persist } = await persister.repository(link.path);
        unsent.set(link.path, await link.handOver(repo, persist));
      } catch (err) {
        this.#environment.onRefused(err);
      }
    }
    // Over a channel object of its own: this tab's links hear it as any tab's.
    const channel = this.#environment.openChannel();
    const id = this.tab;
    const leader = new TabLeader(id, channel, persister, this.#environment.onRefused);
    // Heard by this tab's own links too (they listen on another channel object).
    this.#announce(channel);
    // What the old leader stored and never sent (it crashed, or froze, in between): every tab
    // lacks it as this one did, and imports it now rather than refuse what builds on it.
    for (const [path, frames] of unsent) postBlocks(channel, id, path, frames);
    const promoted = { persister, leader, channel };
    this.#promoted = promoted;
    this.#environment.servingFrom(persister);
    return promoted;
  }

  /**
   * Tried until it opens, while this tab leads: the old leader's files may stay held a moment
   * after its lock is gone (its worker ending: E_LOCKED), and any other failure (the storage
   * failing) may pass too. Giving up would leave this tab holding the lead and serving nobody,
   * with every other tab's writes and opens waiting on it. Each new failure is reported once.
   */
  async #openPersisterPatiently(): Promise<Persister> {
    let reported = "";
    for (let delay = RETRY_FIRST_MS;; delay = Math.min(delay * 2, RETRY_LAST_MS)) {
      try {
        return await this.#environment.openPersister();
      } catch (err) {
        if (this.#closed || this.#election.role !== "leader") throw err;
        const failure = describeFailure(err);
        if (!isCairnError(err, "E_LOCKED") && failure !== reported) {
          reported = failure;
          this.#environment.onRefused(err);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  async #endPromotion(): Promise<void> {
    const promotion = this.#promotion;
    this.#promotion = undefined;
    const promoted = await promotion?.catch(() => undefined);
    if (!promoted) return;
    if (this.#promoted === promoted) {
      this.#promoted = undefined;
      this.#environment.servingFrom(undefined);
    }
    promoted.leader.close();
    promoted.channel.close();
    await promoted.persister.close();
  }

  #lostLead(): void {
    if (this.#ledAtOpen) {
      // As a close of the page: the close tookOver starts stores this tab's last blocks (its
      // writes since the thaw), which must still reach the tabs, or they refuse every later
      // block of this session (E_CHAIN_GAP). Sending ends with close().
      this.stopServing();
      this.#environment.tookOver();
      return;
    }
    this.#endPromotion().catch(this.#environment.onRefused);
  }
}

function foreignLeaderError(directory: string, protocol: number): CairnError {
  const version = protocol === 0 ? "0, from before versions" : String(protocol);
  return new CairnError(
    "E_UNSUPPORTED_VERSION",
    `the tab that serves ${directory} runs another release of Cairn (tab protocol ${version}; ` +
      `this page speaks ${TAB_PROTOCOL}): reload or close the app's other tabs, then open again`,
  );
}

function closedError(): CairnError {
  return new CairnError("E_CLOSED", "the database is closed");
}

function randomTabId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
