/**
 * What the leader tab serves to the others, over the database's channel: `join` is answered with
 * the stored session's secret (each tab derives its key from it, tab_keys.ts), and a repository
 * another tab loads or pushes to is opened in the stored database and served by a
 * LeaderRepositoryLink from then on. Nothing is made until a follower asks, so a database open in
 * one tab pays nothing for the others.
 */
import { isCairnError } from "../core/errors.ts";
import type { Repository } from "../repo/repository.ts";
import {
  LeaderRepositoryLink,
  listenForMessages,
  type TabChannel,
  unserved,
} from "./repository_link.ts";
import { describeFailure, type TabMessage } from "./tab_messages.ts";

/** A repository of the stored database, and what persists it under its durability mode. */
export interface PersistedRepository {
  readonly repo: Repository;
  persist(): Promise<void>;
}

/** The stored database the leader serves from. */
export interface PersistingDatabase {
  /** The stored session's secret, sent to joining tabs. */
  readonly storedSecret: Uint8Array;
  /** Opens (or returns the open) repository at `path`. */
  repository(path: string): Promise<PersistedRepository>;
  /** Makes everything stored durable (its `flush()`): a following tab's `db.flush()`. */
  flush(): Promise<void>;
}

interface Served {
  /** Messages that arrived while the repository was being opened, handed on once it is. */
  readonly early: TabMessage[];
  link?: LeaderRepositoryLink;
  repo?: Repository;
}

export class TabLeader {
  readonly #tab: string;
  readonly #channel: TabChannel;
  readonly #database: PersistingDatabase;
  readonly #onRefused: (error: unknown) => void;
  readonly #served = new Map<string, Served>();
  readonly #stop: () => void;
  #closed = false;

  /** `tab`: the leading tab's id, as its heartbeats name it; its answers carry it (`from`). */
  constructor(
    tab: string,
    channel: TabChannel,
    database: PersistingDatabase,
    onRefused: (error: unknown) => void,
  ) {
    this.#tab = tab;
    this.#channel = channel;
    this.#database = database;
    this.#onRefused = onRefused;
    this.#stop = listenForMessages(channel, (message) => this.#receive(message), onRefused);
  }

  /** `forwarded`: a push a retired link was importing (see LeaderRepositoryLink.retire). */
  #receive(message: TabMessage, forwarded = false): void {
    if (message.type === "join") {
      this.#channel.post({
        type: "welcome",
        from: this.#tab,
        to: message.from,
        id: message.id,
        secret: this.#database.storedSecret,
      });
      return;
    }
    if (message.type === "flush") return this.#flush(message.from, message.id);
    if (message.type !== "load" && message.type !== "push") return;
    let served = this.#served.get(message.repo);
    // A repository the leader's own page closed is opened again for the followers.
    if (served?.repo?.closed) {
      served.link?.retire();
      served = undefined;
    }
    if (served?.link) {
      // The link heard it too, unless a link retired since was importing it.
      if (forwarded) served.link.receive(message).catch(this.#onRefused);
      return;
    }
    if (served) {
      served.early.push(message);
      return;
    }
    served = { early: [message] };
    this.#served.set(message.repo, served);
    this.#open(message.repo, served).catch((err) => {
      if (this.#served.get(message.repo) !== served) return;
      this.#served.delete(message.repo); // the next message tries again
      this.#onRefused(err);
      for (const early of served.early) unserved(this.#channel, this.#tab, early, err);
    });
  }

  /**
   * Answers a following tab's `flush` once the stored database is durable. A database closing
   * meanwhile (its page leaving) does not answer: the tab asks the next leader.
   */
  #flush(to: string, id: number): void {
    this.#database.flush().then(
      () => this.#answer({ type: "flushed", from: this.#tab, to, id, error: null }),
      (err) => {
        if (isCairnError(err, "E_CLOSED")) return;
        this.#answer({ type: "flushed", from: this.#tab, to, id, error: describeFailure(err) });
      },
    );
  }

  #answer(message: TabMessage): void {
    if (!this.#closed) this.#channel.post(message);
  }

  async #open(path: string, served: Served): Promise<void> {
    const { repo, persist } = await this.#database.repository(path);
    if (this.#served.get(path) !== served) return; // closed meanwhile
    served.repo = repo;
    served.link = new LeaderRepositoryLink(
      { tab: this.#tab, channel: this.#channel, repo, onRefused: this.#onRefused },
      persist,
      (message) => this.#receive(message, true),
    );
    for (const message of served.early.splice(0)) {
      served.link.receive(message).catch(this.#onRefused);
    }
  }

  /** Its page is closing: answers no tab from now on, but sends them what the close stores. */
  stopAnswering(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stop();
    for (const served of this.#served.values()) served.link?.stopAnswering();
  }

  close(): void {
    this.stopAnswering();
    for (const served of this.#served.values()) served.link?.close();
    this.#served.clear();
  }
}
