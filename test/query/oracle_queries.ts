/**
 * The random notes, filters and queries of the query oracles, and the check of a query against
 * a fresh scan (reference.ts): shared by the oracle over live updates (live_oracle.test.ts) and
 * the one over repositories reopened from disk (test/server/stored_scan.test.ts).
 */
import assert from "node:assert/strict";
import { defineSchema, type Item, type LiveQuery, type RepositoryHandle } from "cairndb";
import { chance, int, pick, type Random, referenceKeys, type ReferenceQuery } from "./reference.ts";

export const NOTE_FIELDS = {
  title: { type: "string", required: true },
  count: { type: "number" },
  done: { type: "boolean" },
  due: { type: "date" },
  tags: { type: "set" },
} as const;
export const Note = defineSchema({
  ns: "qnote",
  version: 1,
  indexes: ["count"],
  fields: NOTE_FIELDS,
});
/** The same fields with no index declared: its cold queries scan. */
export const PlainNote = defineSchema({ ns: "qplain", version: 1, fields: NOTE_FIELDS });
/** Its next version, whose upgrade changes `count`: a filter must see the upgraded value. */
export const PlainNoteV2 = defineSchema({
  ns: "qplain",
  version: 2,
  from: PlainNote,
  fields: NOTE_FIELDS,
  upgrade: (old) => ({ ...old, count: old.count === undefined ? undefined : old.count + 1 }),
});
type NoteItem = Item<typeof Note>;

const TITLES = ["", "a", "ab", "abc", "b", "ba", "bb", "c"];
const TAGS = ["x", "y", "z"];
const DAY = 86_400_000;
export const dateOf = (n: number) => new Date(Date.UTC(2024, 0, 1) + n * DAY);
export const FIELDS = ["title", "count", "done", "due", "tags"] as const;
export const KEYS = Array.from({ length: 14 }, (_, i) => `k${i.toString(36)}`);

export function fieldValue(rng: Random, field: string): unknown {
  switch (field) {
    case "title":
      return pick(rng, TITLES);
    case "count":
      return chance(rng, 0.2) ? int(rng, -4, 8) / 2 : int(rng, -2, 6);
    case "done":
      return chance(rng, 0.5);
    case "due":
      return dateOf(int(rng, 0, 4));
    default:
      return new Set(TAGS.filter(() => chance(rng, 0.4)));
  }
}

export function createInput(rng: Random): Record<string, unknown> {
  const input: Record<string, unknown> = { title: pick(rng, TITLES) };
  for (const field of FIELDS.slice(1)) {
    if (chance(rng, 0.7)) input[field] = fieldValue(rng, field);
  }
  return input;
}

export function changes(rng: Random): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let n = int(rng, 1, 2); n > 0; n--) {
    const field = pick(rng, FIELDS);
    out[field] = field !== "title" && chance(rng, 0.2) ? undefined : fieldValue(rng, field);
  }
  return out;
}

/** A random condition on `field`, with operands around the data's domain (boundaries included). */
export function condition(rng: Random, field: string): unknown {
  const operand = () => {
    switch (field) {
      case "title":
        return pick(rng, [...TITLES, "aa", "bz", "d"]);
      case "count":
        return int(rng, -3, 7);
      case "done":
        return chance(rng, 0.5);
      default:
        return dateOf(int(rng, -1, 5));
    }
  };
  if (field === "tags") return { has: pick(rng, [...TAGS, "w"]) };
  if (chance(rng, 0.15)) return operand(); // shorthand for eq
  const ops = field === "done"
    ? ["eq", "ne", "in"]
    : ["eq", "ne", "gt", "gte", "lt", "lte", "in", ...(field === "title" ? ["prefix"] : [])];
  const out: Record<string, unknown> = {};
  for (let n = chance(rng, 0.3) ? 2 : 1; n > 0; n--) {
    const op = pick(rng, ops);
    if (op === "in") out.in = Array.from({ length: int(rng, 0, 3) }, operand);
    else if (op === "prefix") out.prefix = pick(rng, ["", "a", "ab", "b", "x"]);
    else out[op] = operand();
  }
  return out;
}

/** One or two field conditions, and `or` / `and` groups nested up to two levels. */
export function filter(rng: Random, depth = 2): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let n = int(rng, 1, 2); n > 0; n--) {
    const field = pick(rng, FIELDS);
    out[field] = condition(rng, field);
  }
  if (depth > 0 && chance(rng, depth === 2 ? 0.35 : 0.15)) {
    out.or = Array.from({ length: int(rng, 1, 3) }, () => filter(rng, depth - 1));
  }
  if (depth > 0 && chance(rng, 0.1)) out.and = [filter(rng, depth - 1)];
  return out;
}

export const SORTS: readonly (readonly string[] | undefined)[] = [
  undefined,
  ["count"],
  ["title"],
  ["due"],
  ["done", "count"],
  ["tags"],
];

export interface Open {
  readonly query: LiveQuery<NoteItem>;
  readonly reference: ReferenceQuery;
  /** For a predicate that throws for some items: which (their typed values). */
  readonly throwsFor?: (values: Readonly<Record<string, unknown>>) => boolean;
}

export function randomQuery(rng: Random, repo: RepositoryHandle, id?: string, schema = Note): Open {
  const where = chance(rng, 0.85) ? filter(rng) : undefined;
  const sortBy = pick(rng, SORTS);
  const desc = chance(rng, 0.3);
  const limit = chance(rng, 0.4) ? int(rng, 0, 5) : undefined;
  const query = repo.query({
    schema,
    where: where as never,
    sortBy: sortBy as never,
    desc,
    limit,
    id,
  }) as LiveQuery<NoteItem>;
  return { query, reference: { schema, where, sortBy, desc, limit } };
}

/** A predicate query sorted by a comparator: never pooled, maintained the same way. */
export function predicateQuery(repo: RepositoryHandle): Open {
  const query = repo.query({
    schema: Note,
    where: (item) => item.get("title").length % 2 === 0,
    sortBy: (a, b) => (a.get("count") ?? -100) - (b.get("count") ?? -100),
    limit: 6,
  });
  return {
    query,
    reference: {
      schema: Note,
      where: (v) => (v.title as string).length % 2 === 0,
      compare: (a, b) => ((a.count as number) ?? -100) - ((b.count as number) ?? -100),
      limit: 6,
    },
  };
}

/**
 * A predicate that throws for items without a due date: they must be left out, as a fresh
 * evaluation leaves them out, and `error` must be set exactly while such an item exists.
 */
export function throwingQuery(repo: RepositoryHandle): Open {
  const query = repo.query({
    schema: Note,
    where: (item) => item.get("due")!.getTime() >= dateOf(2).getTime(),
    sortBy: "title",
  });
  query.onError(() => {}); // heard, so not reported as uncaught
  return {
    query,
    reference: {
      schema: Note,
      where: (v) => v.due !== undefined && (v.due as Date).getTime() >= dateOf(2).getTime(),
      sortBy: ["title"],
    },
    throwsFor: (v) => v.due === undefined,
  };
}

export function check(repo: RepositoryHandle, open: Open, where: string): void {
  if (open.throwsFor) {
    const failing = [...repo.keys()].some((key) =>
      open.throwsFor!(repo.get(key, Note)!.toObject() as Record<string, unknown>)
    );
    assert.equal(open.query.error !== undefined, failing, `${where}: error while items fail`);
  }
  const got = open.query.results.map((item) => item.key);
  const want = referenceKeys(repo, open.reference);
  assert.deepEqual(
    got,
    want,
    `${where}: query ${JSON.stringify({ ...open.reference, schema: open.reference.schema.id })}`,
  );
}

export function localWrite(rng: Random, repo: RepositoryHandle, keys = KEYS, schema = Note): void {
  const key = pick(rng, keys);
  const item = repo.get(key, schema);
  if (!item) repo.create(schema, createInput(rng) as never, { key });
  else if (chance(rng, 0.2)) item.delete();
  else item.update(changes(rng) as never);
}
