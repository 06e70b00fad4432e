/**
 * S02's clients inside one client process: many databases, each linked to the server, a few of
 * them writing. Each item carries the wall-clock time it was written at (`Date.now()`, in its
 * `count` field); every client that receives it records the delivery latency against the same
 * clock. Every process on the machine reads one system clock, so times from different processes
 * compare directly, in 1 ms steps (performance.timeOrigin would give finer steps, but each
 * process's monotonic clock may drift from the others' over a run).
 */
import { Cairn, type RepositoryHandle, sync, type SyncLink } from "../../src/mod.ts";
import { ItemSchema, REPO_PATH } from "../contenders/cairn.ts";

interface Client {
  db: Cairn;
  repo: RepositoryHandle;
  link: SyncLink;
}

export class FanOutClients {
  readonly #clients: Client[] = [];
  readonly #writers: number;
  readonly #name: string;
  /** Delivery latencies (ms) recorded since the last drain. */
  #latencies: number[] = [];
  #written = 0;

  /** Each client in a repository of its own (S06's "many"), instead of all in one. */
  readonly #apart: boolean;

  constructor(writers: number, name: string, apart = false) {
    this.#writers = writers;
    this.#name = name;
    this.#apart = apart;
  }

  async open(url: string, count: number): Promise<void> {
    for (let c = 0; c < count; c++) {
      const db = await Cairn.open({ schemas: [ItemSchema] });
      const repo = await db.open(this.#apart ? `${REPO_PATH}/${this.#name}-${c}` : REPO_PATH);
      const link = sync(db, url);
      repo.on("change", (change) => {
        if (change.source !== "remote") return;
        const writtenAt = repo.get(change.key, ItemSchema)?.get("count");
        if (writtenAt !== undefined) this.#latencies.push(Date.now() - writtenAt);
      });
      this.#clients.push({ db, repo, link });
    }
    await Promise.all(this.#clients.map((c) => c.link.synced()));
  }

  /** Each writer writes one item and waits for its ack, again and again for `ms`. */
  async write(ms: number): Promise<number> {
    const until = Date.now() + ms;
    let writes = 0;
    await Promise.all(
      this.#writerClients().map(async (client, w) => {
        while (Date.now() < until) {
          this.#create(client, w, Date.now());
          await client.link.synced();
          writes++;
        }
      }),
    );
    return writes;
  }

  /**
   * Each writer writes one item every `intervalMs` for `ms`, without waiting for acks (the
   * writers' starts spread over one interval). An item carries the time it was due, not the
   * time it was written, so a write the process was too busy to make on time counts its delay
   * (no coordinated omission). Resolves once the server has acknowledged every write.
   */
  async writePaced(ms: number, intervalMs: number): Promise<number> {
    const start = Date.now();
    const writers = this.#writerClients();
    let writes = 0;
    await Promise.all(writers.map(async (client, w) => {
      for (
        let due = start + (w * intervalMs) / writers.length;
        due < start + ms;
        due += intervalMs
      ) {
        const wait = due - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        this.#create(client, w, Math.round(due));
        writes++;
      }
      await client.link.synced();
    }));
    return writes;
  }

  #writerClients(): Client[] {
    return this.#clients.slice(0, this.#writers);
  }

  #create({ repo }: Client, writer: number, writtenAt: number): void {
    const n = this.#written++;
    repo.create(ItemSchema, { title: `${this.#name} ${writer} ${n}`, count: writtenAt }, {
      key: `${this.#name}-${n}`,
    });
  }

  /** Waits until every client holds `items` items; the latencies recorded since last time. */
  async drain(items: number): Promise<number[]> {
    await Promise.all(this.#clients.map(({ repo }) =>
      new Promise<void>((resolve) => {
        if (repo.count() >= items) return resolve();
        const off = repo.on("change", () => {
          if (repo.count() < items) return;
          off();
          resolve();
        });
      })
    ));
    const latencies = this.#latencies;
    this.#latencies = [];
    return latencies;
  }

  async close(): Promise<void> {
    for (const { db, link } of this.#clients) {
      await link.close();
      await db.close();
    }
  }
}
