/**
 * The PostgreSQL store's tables, created and migrated when a server starts. `cairn_schema` holds
 * the version the tables are at; each migration moves it up by one, inside a transaction that
 * holds an advisory lock, so servers starting together migrate once and never see half a schema.
 *
 * - cairn_server: one row, the id every server announces and the epoch of every position;
 * - cairn_repositories: a repository's head, the position of its last block; its row lock is
 *   what orders pushes, so positions are gap-free and in commit order;
 * - cairn_blocks: the blocks, at most one per (repository, session, seq), one per position;
 * - cairn_writers: a repository's writers and the position of each one's first block;
 * - cairn_rules: the built-in access rules (owner, members and their rights, public read);
 * - cairn_rule_changes (version 2): the ids of the rule changes made in the last hour, so that a
 *   change retried after a COMMIT whose answer was lost is not made a second time.
 */
import { CairnError } from "../../core/errors.ts";
import type { PostgresClient } from "./postgres_pool.ts";

/** Runs every statement of each step after the stored version, in order. */
const MIGRATIONS: readonly (readonly string[])[] = [
  [
    `CREATE TABLE cairn_server (
      only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
      server_id text NOT NULL,
      epoch text NOT NULL)`,
    `CREATE TABLE cairn_repositories (
      path text PRIMARY KEY,
      head bigint NOT NULL)`,
    `CREATE TABLE cairn_blocks (
      repository text NOT NULL REFERENCES cairn_repositories (path),
      session text NOT NULL,
      seq bigint NOT NULL,
      hash text NOT NULL,
      payload bytea NOT NULL,
      position bigint NOT NULL,
      PRIMARY KEY (repository, session, seq),
      UNIQUE (repository, position))`,
    `CREATE TABLE cairn_writers (
      repository text NOT NULL REFERENCES cairn_repositories (path),
      public_key bytea NOT NULL,
      position bigint NOT NULL,
      PRIMARY KEY (repository, public_key))`,
    `CREATE TABLE cairn_rules (
      repository text PRIMARY KEY,
      rules jsonb NOT NULL)`,
  ],
  [
    `CREATE TABLE cairn_rule_changes (
      id text PRIMARY KEY,
      made timestamptz NOT NULL DEFAULT now())`,
  ],
];

/** Any number, the same for every Cairn server: the lock migrations take. */
const MIGRATION_LOCK = 0x636169726e;

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the schema to SCHEMA_VERSION; returns the server id and epoch (made the first time). */
export async function migrate(
  client: PostgresClient,
  fresh: () => { serverId: string; epoch: string },
): Promise<{ serverId: string; epoch: string }> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    // Asked first, not CREATE ... IF NOT EXISTS: that needs the right to create in the schema
    // even when the table exists, which a role that only runs the servers may lack.
    const [{ exists }] = (await client.query(
      "SELECT to_regclass('cairn_schema') IS NOT NULL AS exists",
    )).rows;
    if (!exists) {
      await client.query("CREATE TABLE cairn_schema (version integer NOT NULL)");
    }
    const rows = (await client.query("SELECT version FROM cairn_schema")).rows;
    const version = rows.length === 0 ? 0 : Number(rows[0].version);
    if (version > SCHEMA_VERSION) {
      throw new CairnError(
        "E_UNSUPPORTED_VERSION",
        `the database's Cairn schema is version ${version}; this server knows up to ` +
          `${SCHEMA_VERSION}: upgrade the server`,
      );
    }
    for (const step of MIGRATIONS.slice(version)) {
      for (const statement of step) await client.query(statement);
    }
    if (rows.length === 0) {
      await client.query("INSERT INTO cairn_schema VALUES ($1)", [SCHEMA_VERSION]);
    } else if (version !== SCHEMA_VERSION) {
      await client.query("UPDATE cairn_schema SET version = $1", [SCHEMA_VERSION]);
    }
    const { serverId, epoch } = fresh();
    await client.query(
      "INSERT INTO cairn_server (server_id, epoch) VALUES ($1, $2) ON CONFLICT DO NOTHING",
      [serverId, epoch],
    );
    const [identity] = (await client.query("SELECT server_id, epoch FROM cairn_server")).rows;
    await client.query("COMMIT");
    return { serverId: String(identity.server_id), epoch: String(identity.epoch) };
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  }
}
