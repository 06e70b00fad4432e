/**
 * The commit model (docs/api.md, "Low level: commits and their encodings"): one immutable change to one item.
 *
 * Values inside commits are "wire values": JSON-compatible data with no Sets, Maps or Dates.
 * The schema layer converts typed field values to and from this form, so both log formats
 * (msgpack and JSON lines) carry exactly the same content.
 */

export type WireValue =
  | null
  | boolean
  | number
  | string
  | WireValue[]
  | { [key: string]: WireValue };

/** Field name → wire value. */
export type FieldRecord = { [field: string]: WireValue };

/**
 * The change a commit carries: exactly one of a full value, a field delta, or a tombstone. Its
 * fields sit on the commit itself, not in an object of their own: one object fewer per write.
 */
export type CommitBody =
  | { readonly kind: "value"; readonly value: FieldRecord }
  /** Fields set and fields removed, relative to the value at `parents[0]`. */
  | { readonly kind: "delta"; readonly set: FieldRecord; readonly unset: readonly string[] }
  | { readonly kind: "delete" };

/** What every commit has, whatever its change. */
export interface CommitHeader {
  /** The author session's id. */
  readonly session: string;
  /**
   * Per-session sequence number, starting at 1. A session never reuses one, so
   * (session, seq) is unique without randomness and "what do you have?" is a version vector.
   */
  readonly seq: number;
  /** Item key within its repository. */
  readonly key: string;
  /** Hybrid logical clock reading (see hlc.ts): orders concurrent writes deterministically. */
  readonly hlc: number;
  /** Ids of the key's leaves this commit replaces (empty for the first commit of a key). */
  readonly parents: readonly string[];
  /** Schema id `ns@version` the value follows. */
  readonly schema: string;
}

/** One immutable change to one item: its header and, narrowed by `kind`, its change. */
export type Commit = CommitHeader & CommitBody;

/**
 * Makes a commit. Every plain commit is made here, with its fields in one order, so they share one
 * object shape per kind wherever they come from (a local write, a decoded block, a checkpoint);
 * the only other shape is a local update's (makeOwnParentCommit).
 * `change` is the full value of a "value" commit or the set fields of a "delta" one; `unset`
 * the removed fields of a "delta". Nothing is checked: callers validate what they did not make.
 */
export function makeCommit(
  session: string,
  seq: number,
  key: string,
  hlc: number,
  parents: readonly string[],
  schema: string,
  kind: Commit["kind"],
  change?: FieldRecord,
  unset?: readonly string[],
): Commit {
  if (kind === "value") {
    return { session, seq, key, hlc, parents, schema, kind, value: change! };
  }
  if (kind === "delta") {
    return { session, seq, key, hlc, parents, schema, kind, set: change!, unset: unset! };
  }
  return { session, seq, key, hlc, parents, schema, kind };
}

/**
 * A commit written here over its item's one leaf, that leaf being by the same session: the usual
 * local update. Its `parents` (`[<session>.<parentSeq>]`) are made only when read. Sealing writes
 * the parent's id from `parentSeq` (see writeCommit), and most such commits are never asked for
 * their parents; making the array and the id string on every write cost about 0.2 µs of a 1.1 µs
 * update, most of it the garbage collector copying what each write keeps.
 */
class OwnParentCommit {
  readonly session: string;
  readonly seq: number;
  readonly key: string;
  readonly hlc: number;
  readonly schema: string;
  readonly kind: Commit["kind"];
  readonly value: FieldRecord | undefined;
  readonly set: FieldRecord | undefined;
  readonly unset: readonly string[] | undefined;
  readonly parentSeq: number;
  #parents: readonly string[] | undefined;

  constructor(
    session: string,
    seq: number,
    key: string,
    hlc: number,
    parentSeq: number,
    schema: string,
    kind: Commit["kind"],
    change: FieldRecord | undefined,
    unset: readonly string[] | undefined,
  ) {
    this.session = session;
    this.seq = seq;
    this.key = key;
    this.hlc = hlc;
    this.schema = schema;
    this.kind = kind;
    this.value = kind === "value" ? change : undefined;
    this.set = kind === "delta" ? change : undefined;
    this.unset = kind === "delta" ? unset : undefined;
    this.parentSeq = parentSeq;
  }

  get parents(): readonly string[] {
    return this.#parents ??= [commitId({ session: this.session, seq: this.parentSeq })];
  }
}

/**
 * Makes a commit whose one parent is `<session>.<parentSeq>`, as makeCommit would with that
 * parent, except that the parents are made when first read (see OwnParentCommit). Arguments:
 * session, seq, key, hlc, parentSeq, schema, kind, change, unset.
 */
export function makeOwnParentCommit(
  ...fields: ConstructorParameters<typeof OwnParentCommit>
): Commit {
  return new OwnParentCommit(...fields) as unknown as Commit;
}

/** The seq of a commit's one parent when it is by the same session and known as a number, else 0. */
export function ownParentSeq(commit: Commit): number {
  return commit instanceof OwnParentCommit ? commit.parentSeq : 0;
}

/** The id of a commit: `<session>.<seq>`. Session ids never contain a dot. */
export function commitId(commit: Pick<Commit, "session" | "seq">): string {
  return `${commit.session}.${commit.seq}`;
}

/** Splits a commit id into its session and sequence; undefined for a malformed id. */
export function parseCommitId(id: string): { session: string; seq: number } | undefined {
  const dot = id.lastIndexOf(".");
  if (dot <= 0) return undefined;
  const seq = Number(id.slice(dot + 1));
  if (!Number.isSafeInteger(seq) || seq < 1) return undefined;
  return { session: id.slice(0, dot), seq };
}
