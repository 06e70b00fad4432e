/**
 * An in-memory Web Locks manager shared by fake tabs: exclusive locks granted in request order,
 * `ifAvailable` and `steal` as the Web Locks spec has them, and `crash(tab)`, which drops every
 * lock and queued request of one tab as a browser does for a closed or crashed page.
 */
import type { LockManagerLike, LockOptions } from "../../src/tabs/locks.ts";

interface Request {
  tab: string;
  callback: (lock: unknown) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export class FakeLocks {
  #holders = new Map<string, Request>();
  #queues = new Map<string, Request[]>();

  /** The manager one tab sees. */
  forTab(tab: string): LockManagerLike {
    return {
      request: (name: string, options: LockOptions, callback) =>
        new Promise((resolve, reject) => {
          this.#request(name, options, { tab, callback, resolve, reject });
        }),
    };
  }

  /** Which tab holds `name`, if any. */
  holder(name: string): string | undefined {
    return this.#holders.get(name)?.tab;
  }

  /** The tab is gone: its locks are released and its queued requests dropped. */
  crash(tab: string): void {
    for (const [name, queue] of this.#queues) {
      this.#queues.set(name, queue.filter((r) => r.tab !== tab));
    }
    for (const [name, holder] of [...this.#holders]) {
      if (holder.tab === tab) this.#release(name, holder);
    }
  }

  #request(name: string, options: LockOptions, request: Request): void {
    const holder = this.#holders.get(name);
    if (holder && options.steal) {
      this.#holders.delete(name);
      holder.reject(new DOMException("the lock was stolen", "AbortError"));
    } else if (holder && options.ifAvailable) {
      queueMicrotask(() => request.callback(null).then(request.resolve, request.reject));
      return;
    } else if (holder) {
      this.#queues.set(name, [...this.#queues.get(name) ?? [], request]);
      return;
    }
    this.#grant(name, request);
  }

  #grant(name: string, request: Request): void {
    this.#holders.set(name, request);
    queueMicrotask(() => {
      request.callback({ name }).then(
        (value) => {
          this.#release(name, request);
          request.resolve(value);
        },
        (err) => {
          this.#release(name, request);
          request.reject(err);
        },
      );
    });
  }

  #release(name: string, request: Request): void {
    if (this.#holders.get(name) !== request) return; // stolen before
    this.#holders.delete(name);
    const [next, ...rest] = this.#queues.get(name) ?? [];
    this.#queues.set(name, rest);
    if (next) this.#grant(name, next);
  }
}
