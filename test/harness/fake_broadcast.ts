/**
 * A BroadcastChannel for fake tabs: every `end` is one channel object; what one posts reaches
 * every other end (as structured clones, asynchronously, as the real one does), never itself.
 * As with the real one, a message is one event per channel object, dispatched in a task of its
 * own to the listeners the object has then, and not to an object closed (or dropped) by then: a
 * listener added after the post but before the dispatch hears it. (Each listener had a task of
 * its own, taken at the post: a link made between two of them missed a message its leader took
 * for heard.)
 */
import type { TabChannel } from "../../src/tabs/repository_link.ts";
import { encodeTabMessage, type TabMessage } from "../../src/tabs/tab_messages.ts";

interface End {
  readonly owner: string;
  readonly listeners: Set<(value: unknown) => void>;
}

export class FakeBroadcast {
  #ends = new Set<End>();
  /** Everything posted, for assertions. */
  readonly posted: TabMessage[] = [];

  /** A new channel object of tab `owner`. */
  end(owner: string): TabChannel & { postRaw(value: unknown): void; close(): void } {
    const end: End = { owner, listeners: new Set() };
    this.#ends.add(end);
    const send = (value: unknown) => {
      if (!this.#ends.has(end)) return;
      for (const other of this.#ends) {
        if (other === end) continue;
        const copy = structuredClone(value);
        setTimeout(() => {
          if (!this.#ends.has(other)) return;
          for (const listener of [...other.listeners]) {
            try {
              listener(copy);
            } catch (err) {
              // Reported as the real one does, without keeping the next listeners from it.
              setTimeout(() => {
                throw err;
              }, 0);
            }
          }
        }, 0);
      }
    };
    return {
      post: (message) => {
        this.posted.push(message);
        send(encodeTabMessage(message));
      },
      postRaw: send,
      listen: (listener) => {
        end.listeners.add(listener);
        return () => end.listeners.delete(listener);
      },
      close: () => this.#ends.delete(end),
    };
  }

  /** The tab is gone: nothing reaches its channel objects any more, nor leaves them. */
  drop(owner: string): void {
    for (const end of this.#ends) if (end.owner === owner) this.#ends.delete(end);
  }
}
