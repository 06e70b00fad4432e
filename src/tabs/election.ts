/**
 * Which tab of a database leads (owns the OPFS worker, the durable log). The leader is whoever
 * holds the database's Web Lock: a tab that closes or crashes releases it and the next waiting
 * tab is granted it. A frozen tab keeps its lock, so the leader also sends a heartbeat every
 * HEARTBEAT_MS, and a visible follower that heard none for STEAL_AFTER_MS takes the lock with
 * `steal: true` (the stolen leader learns it from its rejected request and steps down). Hidden
 * followers never steal: their timers are throttled, and they would take the lead from a leader
 * that is only slow to be heard. Nor does a follower steal from a leader whose timers are
 * throttled (a page hidden for minutes: Chrome then runs its timers once a minute) but which
 * still runs: after PROBE_AFTER_MS of silence it sends a probe, which the leader answers at once
 * from its message handler; only a leader that leaves the probe unanswered (frozen, hung) is
 * stolen from.
 *
 * The clock, the timers and the locks are injected so the state machine runs on fakes in tests.
 *
 * Terms come from the channel, where any script of the origin may post: a term over MAX_TERM is
 * ignored, and a new leader's term stays at MAX_TERM rather than count past it, so a forged term
 * can neither make this tab's own heartbeats unsendable nor break the election. Nothing that runs
 * from the timer or a lock grant throws: a hook that fails is reported (`failed`) and the
 * election carries on.
 */
import { type HeldLock, holdLock, type LockManagerLike, type LockOptions } from "./locks.ts";
import { MAX_TERM } from "./tab_messages.ts";

export const HEARTBEAT_MS = 400;
/** Three heartbeats missed, and failover still ends within 2 s of the leader's last one. */
export const STEAL_AFTER_MS = 1_500;
/** A heartbeat late: a follower asks the leader to answer (probe), a tick before it may steal. */
export const PROBE_AFTER_MS = 700;

export type Role = "follower" | "leader" | "closed";

export interface ElectionHooks {
  /**
   * This tab became the leader; `term` is greater than any term heard before, and than the
   * clock's reading before it.
   */
  becameLeader(term: number): void;
  /** This tab lost the lead (stolen while it was frozen or slow). */
  lostLead(): void;
  /** Post a heartbeat to the other tabs. */
  sendHeartbeat(term: number): void;
  /** Post a probe: the leader answers it with a heartbeat. */
  sendProbe(): void;
  /** One of the hooks above threw (the election carried on), for logging. */
  failed?(error: unknown): void;
}

export interface ElectionEnvironment {
  readonly locks: LockManagerLike;
  now(): number;
  /** Whether the page is visible (`document.visibilityState === "visible"`). */
  visible(): boolean;
}

export function leaderLockName(directory: string): string {
  return `cairn:leader:${directory}`;
}

export class Election {
  #environment: ElectionEnvironment;
  #hooks: ElectionHooks;
  #lockName: string;
  #role: Role = "follower";
  #lock: HeldLock | undefined;
  /** The highest term heard of (or held). */
  #term = 0;
  /** When the current leader was last heard from; a newly started follower counts from then. */
  #lastHeard: number;
  #stealing = false;
  /** When this follower last sent a probe. */
  #probedAt = -Infinity;
  /** Whether a plain (waiting) request for the lock is queued. */
  #queued = false;

  constructor(directory: string, environment: ElectionEnvironment, hooks: ElectionHooks) {
    this.#environment = environment;
    this.#hooks = hooks;
    this.#lockName = leaderLockName(directory);
    this.#lastHeard = environment.now();
  }

  get role(): Role {
    return this.#role;
  }

  get term(): number {
    return this.#term;
  }

  /**
   * Joins the election: takes the lead at once when no tab holds it (`becameLeader` is called
   * before this resolves true), else queues for it and resolves false (`becameLeader` is called
   * when the lock is granted).
   */
  async start(): Promise<boolean> {
    await this.#acquire({ ifAvailable: true });
    if (this.#role === "follower") this.#queue();
    return this.#role === "leader";
  }

  /** A heartbeat (already decoded) from the channel. */
  heardHeartbeat(term: number): void {
    if (!Number.isSafeInteger(term) || term > MAX_TERM) return; // forged: no tab sends it
    if (term < this.#term) return; // an old leader that has not yet learnt it was replaced
    this.#term = term;
    this.#lastHeard = this.#environment.now();
  }

  /** A follower's probe: a leader answers at once, whatever its timers do. */
  heardProbe(): void {
    if (this.#role === "leader") this.#call(() => this.#hooks.sendHeartbeat(this.#term));
  }

  /**
   * Called every HEARTBEAT_MS: the leader sends its heartbeat; a visible follower that has heard
   * nothing for PROBE_AFTER_MS sends a probe, and steals the lock once it has heard nothing for
   * STEAL_AFTER_MS, the probe unanswered.
   */
  tick(): void {
    if (this.#role === "leader") {
      this.#call(() => this.#hooks.sendHeartbeat(this.#term));
      return;
    }
    if (this.#role !== "follower" || this.#stealing || !this.#environment.visible()) return;
    const now = this.#environment.now();
    if (now - this.#lastHeard < PROBE_AFTER_MS) return;
    if (this.#probedAt <= this.#lastHeard) {
      this.#probedAt = now;
      this.#call(() => this.#hooks.sendProbe());
      return;
    }
    if (now - this.#lastHeard < STEAL_AFTER_MS) return;
    this.#stealing = true;
    void this.#acquire({ steal: true }).finally(() => this.#stealing = false);
  }

  /** Gives up the lead (or the place in the queue) for good. */
  close(): void {
    this.#role = "closed";
    this.#lock?.release();
    this.#lock = undefined;
  }

  #queue(): void {
    if (this.#queued) return;
    this.#queued = true;
    void this.#acquire({}).finally(() => this.#queued = false);
  }

  async #acquire(options: LockOptions): Promise<void> {
    let lock: HeldLock | undefined;
    try {
      lock = await holdLock(this.#environment.locks, this.#lockName, options);
    } catch {
      return; // a queued request aborted by a steal elsewhere: the next tick tries again
    }
    if (!lock) return;
    if (this.#role !== "follower" || this.#lock) {
      lock.release(); // closed meanwhile, or granted twice (a steal raced the queued request)
      return;
    }
    this.#lock = lock;
    this.#role = "leader";
    // Past every term heard here, and past the clock: a tab that steals before it heard anyone
    // (the leader frozen as it opened) must still serve in a term above the one the other tabs
    // follow, or they would ignore it.
    const now = this.#environment.now();
    this.#term = Math.min(Math.max(this.#term + 1, now), MAX_TERM);
    this.#lastHeard = now;
    // Watched before the hooks run, so a steal is noticed whatever they do.
    void lock.lost.then(() => {
      if (this.#lock !== lock) return;
      this.#lock = undefined;
      if (this.#role !== "leader") return;
      this.#role = "follower";
      this.#lastHeard = this.#environment.now();
      this.#call(() => this.#hooks.lostLead());
      this.#queue();
    });
    this.#call(() => this.#hooks.becameLeader(this.#term));
    this.#call(() => this.#hooks.sendHeartbeat(this.#term));
  }

  /** Runs a hook; one that throws is reported, never thrown into the timer or a lock grant. */
  #call(hook: () => void): void {
    try {
      hook();
    } catch (err) {
      try {
        this.#hooks.failed?.(err);
      } catch {
        // a failing logger: nothing left to tell
      }
    }
  }
}
