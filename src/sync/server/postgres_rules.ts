/**
 * The built-in access rules in PostgreSQL (`cairn_rules`, one row per repository), shared by
 * every server on the database. A change runs in a transaction that holds the row's lock, so two
 * servers changing one repository at once both count and one of two first writers becomes owner;
 * it notifies `cairn_rules` at commit, and every server reads the row again and applies it to
 * its open connections (postgres_listener.ts delivers the notification).
 *
 * A change is retried when PostgreSQL fails (postgres_retry.ts), also when the answer to its
 * COMMIT was lost: it may have been made. Each change has an id, recorded with it, and a retry
 * that finds its id makes nothing: made again, a grant could undo a revoke another server made
 * in between.
 */
import { CairnError } from "../../core/errors.ts";
import { NO_RULES, type RepositoryRules, storedRules } from "./access.ts";
import { RULES_CHANNEL } from "./postgres_listener.ts";
import { inTransaction, type PostgresPool } from "./postgres_pool.ts";
import { retrying } from "./postgres_retry.ts";
import type { RulesStorage } from "./store.ts";

export class PostgresRules implements RulesStorage {
  readonly #pool: PostgresPool;
  readonly #elsewhere = new Set<(repository: string, rules: RepositoryRules) => void>();
  /** Reports are read one at a time, so a later read is never overtaken by an earlier one. */
  #reading: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(pool: PostgresPool) {
    this.#pool = pool;
  }

  async load(): Promise<Map<string, RepositoryRules>> {
    const { rows } = await this.#pool.query("SELECT repository, rules FROM cairn_rules");
    return new Map(rows.map((row) => [String(row.repository), checked(row)]));
  }

  update(
    repository: string,
    change: (current: RepositoryRules) => RepositoryRules,
  ): Promise<RepositoryRules> {
    const id = crypto.randomUUID();
    return retrying(() =>
      inTransaction(this.#pool, async (client) => {
        await client.query(
          "INSERT INTO cairn_rules VALUES ($1, $2) ON CONFLICT (repository) DO NOTHING",
          [repository, JSON.stringify(NO_RULES)],
        );
        const { rows } = await client.query(
          "SELECT repository, rules FROM cairn_rules WHERE repository = $1 FOR UPDATE",
          [repository],
        );
        const made = await client.query("SELECT 1 FROM cairn_rule_changes WHERE id = $1", [id]);
        if (made.rows.length > 0) return checked(rows[0]); // by the attempt whose COMMIT was lost
        const changed = change(checked(rows[0]));
        await client.query("UPDATE cairn_rules SET rules = $2 WHERE repository = $1", [
          repository,
          JSON.stringify(changed),
        ]);
        // Retries end within a minute (postgres_retry.ts): an hour's ids are plenty.
        await client.query("DELETE FROM cairn_rule_changes WHERE made < now() - interval '1 hour'");
        await client.query("INSERT INTO cairn_rule_changes (id) VALUES ($1)", [id]);
        // Delivered to every server (this one too) when the transaction commits.
        await client.query("SELECT pg_notify($1, $2)", [RULES_CHANNEL, repository]);
        return changed;
      })
    );
  }

  onChangedElsewhere(listener: (repository: string, rules: RepositoryRules) => void): () => void {
    this.#elsewhere.add(listener);
    return () => this.#elsewhere.delete(listener);
  }

  /** A notification: the repository's row is read again and reported. */
  changed(repository: string): void {
    this.#read(async () => {
      const { rows } = await this.#pool.query(
        "SELECT repository, rules FROM cairn_rules WHERE repository = $1",
        [repository],
      );
      return rows;
    });
  }

  /** Listening again after a lost connection: changes meanwhile were not notified. */
  reloadAll(): void {
    this.#read(async () =>
      (await this.#pool.query("SELECT repository, rules FROM cairn_rules")).rows
    );
  }

  /**
   * Reads rows and reports each. Retried for as long as the store is open: a revoke must reach
   * this server however long PostgreSQL is away. A malformed row is passed over (its repository
   * keeps the rules it had here) and does not stop the rows after it; nor does one the server
   * refuses (a repository no path names, edited in by hand): before, it stopped a reload after a
   * reconnect, and the revokes in the rows after it never reached this server.
   */
  #read(rows: () => Promise<Record<string, unknown>[]>): void {
    this.#reading = this.#reading.then(async () => {
      for (const row of await retrying(rows, () => !this.#closed)) {
        const rules = storedRules(row.rules);
        if (!rules) continue;
        for (const listener of this.#elsewhere) {
          try {
            listener(String(row.repository), rules);
          } catch {
            // Refused by the server: passed over, as a malformed row is.
          }
        }
      }
    }).catch(() => {}); // closed
  }

  /** Stops reading: a read waiting for PostgreSQL ends at its next try. */
  close(): void {
    this.#closed = true;
  }
}

function checked(row: Record<string, unknown>): RepositoryRules {
  const rules = storedRules(row.rules);
  if (!rules) {
    throw new CairnError("E_IO", `the stored access rules of ${row.repository} are malformed`);
  }
  return rules;
}
