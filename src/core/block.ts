/**
 * Blocks: the commits one session writes in one tick, sealed under one signature
 * (docs/storage.md, "Block body"). Each session's blocks form a hash chain, so a peer that forks its own history is caught.
 *
 * The signed and hashed bytes are the block's *body*, a canonical MessagePack encoding of its
 * fields. The binary form carries the body bytes as they are; the JSON form carries the fields and
 * re-creates the body from them. That is lossless because decoding accepts only canonical bodies
 * (re-encoding the decoded fields gives the same bytes) and because wire values are canonical
 * upstream: no -0, and well-formed strings (MessagePack cannot carry lone surrogates).
 */
import { bytesEqual, fromBase64Url, toBase64Url } from "./bytes.ts";
import type { Commit } from "./commit.ts";
import {
  blockCommitFromTuple,
  commitFromJson,
  commitFromTuple,
  type CommitJson,
  commitToJson,
  unpackBytes,
  writeBlockCommit,
  writeCommit,
} from "./commit_codec.ts";
import { CairnError } from "./errors.ts";
import { binHeaderLength, MsgpackWriter, writeBinHeader } from "./msgpack_writer.ts";
import {
  type CryptoSuite,
  type Ed25519,
  PUBLIC_KEY_BYTES,
  SIGNATURE_BYTES,
  type SigningKey,
  type VerifyOptions,
} from "./signing.ts";
import { isRepositoryPath } from "./repository_path.ts";
import { assertPositiveInteger, assertString, corrupt, isPlainObject } from "./wire_validation.ts";

/**
 * Layout version written first in every block body. Version 1 repeated the session in every
 * commit and in every parent id; version 2 names it once (see writeBlockCommit). Blocks of
 * both versions are read, verified and re-encoded as they were signed.
 */
export const BLOCK_FORMAT_VERSION = 2;

/** A block body layout this version of Cairn reads and writes. */
export type BlockVersion = 1 | 2;

/** Characters of a session id: 22 base64url characters carry 132 bits of the key's hash. */
export const SESSION_ID_LENGTH = 22;
/**
 * No sealed block is shorter: its session id and its writer's public key alone take this many
 * bytes. What takes blocks by the thousand from the network refuses shorter bins unread.
 */
export const MIN_BLOCK_BYTES = SESSION_ID_LENGTH + PUBLIC_KEY_BYTES;

const SESSION_ID_PATTERN = new RegExp(`^[A-Za-z0-9_-]{${SESSION_ID_LENGTH}}$`);
/** A block hash: base64url of a SHA-256 digest. */
const BLOCK_HASH_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const UNSIGNED = new Uint8Array(0);
/** Reused by every body: its buffer grows to the largest block and is not given up. */
const bodyWriter = new MsgpackWriter();

export interface Block {
  /** The author session's id: `sessionIdFromPublicKey(publicKey)`. */
  readonly session: string;
  /** The author's 32-byte Ed25519 public key, carried so any peer can check id and signature. */
  readonly publicKey: Uint8Array;
  /** Block sequence number within the session: 1, 2, 3, … */
  readonly seq: number;
  /**
   * Hash of the session's previous block. For seq 1, the path of the repository the chain is
   * in, which binds every block of the chain to it (their hashes chain back to it); or "" in a
   * chain begun before Cairn bound chains (2026-11-27), bound to no repository.
   */
  readonly prev: string;
  /** Non-empty; all by `session`, commit seqs strictly increasing. */
  readonly commits: readonly Commit[];
  /** 64-byte Ed25519 signature of the body, or empty for a block written in trusted mode. */
  readonly signature: Uint8Array;
  /** The body's layout when it is an older one (1); absent for the current one. */
  readonly version?: BlockVersion;
}

/** Everything the signature covers. */
export type BlockFields = Omit<Block, "signature">;

export interface SealedBlock {
  readonly block: Block;
  /** The canonical bytes that are hashed. */
  readonly body: Uint8Array;
  /** SHA-256 of the body: what the signature signs. */
  readonly digest: Uint8Array;
  /** base64url(SHA-256(body)): the block's identity, named by the next block's `prev`. */
  readonly hash: string;
  /**
   * Where each commit's encoding starts in the body, then where the last one ends. Present when
   * this process wrote the body (sealing, and the canonical check of a decoded block), so a
   * commit can later be decoded on its own (see CommitGraph).
   */
  readonly commitOffsets?: Uint32Array;
}

/** Who signs a block; null in trusted mode. */
export interface BlockSigner {
  readonly key: SigningKey;
  readonly ed25519: Ed25519;
}

/** What a session's chain holds so far, enough to check the next block against. */
export interface ChainTip {
  readonly seq: number;
  readonly hash: string;
  readonly lastCommitSeq: number;
}

/** The JSON form of a block: one line of a JSONL log. */
export interface BlockJson {
  v: number;
  session: string;
  publicKey: string;
  seq: number;
  prev: string;
  sig: string;
  commits: CommitJson[];
}

/** The first 22 characters of base64url(SHA-256(publicKey)); never contains a dot. */
export async function sessionIdFromPublicKey(
  publicKey: Uint8Array,
  suite: CryptoSuite,
): Promise<string> {
  return toBase64Url(await suite.sha256(publicKey)).slice(0, SESSION_ID_LENGTH);
}

/**
 * The canonical, deterministic bytes a block's signature and hash cover. `commitOffsets`, when
 * given (commits + 1 long), is filled with where each commit starts, then where the commits end.
 */
export function blockBody(fields: BlockFields, commitOffsets?: Uint32Array): Uint8Array {
  const { session, publicKey, seq, prev, commits } = fields;
  const version = fields.version ?? BLOCK_FORMAT_VERSION;
  const write = version === 1 ? writeCommit : writeBlockCommit;
  bodyWriter.reset();
  bodyWriter.arrayHeader(6);
  bodyWriter.number(version);
  bodyWriter.string(session);
  bodyWriter.bytes(publicKey);
  bodyWriter.number(seq);
  bodyWriter.string(prev);
  bodyWriter.arrayHeader(commits.length);
  for (let i = 0; i < commits.length; i++) {
    if (commitOffsets) commitOffsets[i] = bodyWriter.length;
    write(bodyWriter, commits[i]);
  }
  if (commitOffsets) commitOffsets[commits.length] = bodyWriter.length;
  return bodyWriter.take();
}

/**
 * Builds the body, signs it (unless `signer` is null: trusted mode) and hashes it. Refuses, as
 * decodeBlock would, commits that do not belong in one block.
 */
export async function sealBlock(
  fields: BlockFields,
  signer: BlockSigner | null,
  suite: CryptoSuite,
): Promise<SealedBlock> {
  checkSealable(fields, signer);
  const commitOffsets = new Uint32Array(fields.commits.length + 1);
  return await signBody(fields, blockBody(fields, commitOffsets), commitOffsets, signer, suite);
}

function checkSealable(fields: BlockFields, signer: BlockSigner | null): void {
  checkCommits(fields.session, fields.commits);
  if (signer && !bytesEqual(signer.key.publicKey, fields.publicKey)) {
    throw new CairnError("E_BAD_KEY", "block: the signing key is not the block's public key");
  }
}

/** Hashes and signs a block's body (unless `signer` is null: trusted mode). */
async function signBody(
  fields: BlockFields,
  body: Uint8Array,
  commitOffsets: Uint32Array,
  signer: BlockSigner | null,
  suite: CryptoSuite,
): Promise<SealedBlock> {
  const digest = await suite.sha256(body);
  // The signature covers the body's SHA-256 digest, not the body: Ed25519 would otherwise hash
  // the whole body twice more with SHA-512 (~0.35 µs per commit in a large block).
  const signature = signer ? await signer.ed25519.sign(signer.key, digest) : UNSIGNED;
  return {
    block: { ...fields, signature },
    body,
    digest,
    hash: toBase64Url(digest),
    commitOffsets,
  };
}

/**
 * Seals one tick's commits as a chain of blocks, the first at `fields.seq` after `fields.prev`,
 * each body at most `maxBody` bytes; a commit that alone makes a larger body gets a block of its
 * own. A tick that fits, the usual case, is one block whose body is built once. A larger one is
 * cut at commit boundaries of that body: each part's body is its own header followed by its
 * commits' bytes as already written, which are the same in any block of the session (a commit's
 * encoding names nothing else of its block), so no commit is encoded twice.
 */
export async function sealBlocks(
  fields: BlockFields,
  signer: BlockSigner | null,
  suite: CryptoSuite,
  maxBody: number,
): Promise<SealedBlock[]> {
  checkSealable(fields, signer);
  const { commits } = fields;
  const offsets = new Uint32Array(commits.length + 1);
  const whole = blockBody(fields, offsets);
  if (whole.length <= maxBody) return [await signBody(fields, whole, offsets, signer, suite)];
  const sealed: SealedBlock[] = [];
  let { seq, prev } = fields;
  for (let first = 0; first < commits.length;) {
    const header = blockBody({ ...fields, seq, prev, commits: [] });
    // The header ends with an empty array's byte; the part's own count replaces it.
    const fixed = header.length - 1 + ARRAY_HEADER_MAX;
    let end = first + 1;
    while (end < commits.length && fixed + offsets[end + 1] - offsets[first] <= maxBody) end++;
    const part = { ...fields, seq, prev, commits: commits.slice(first, end) };
    const partOffsets = offsets.slice(first, end + 1);
    const body = partBody(header, whole, partOffsets);
    const block = await signBody(part, body, partOffsets, signer, suite);
    sealed.push(block);
    seq++;
    prev = block.hash;
    first = end;
  }
  return sealed;
}

/** The most bytes a MessagePack array header takes. */
const ARRAY_HEADER_MAX = 5;

/**
 * A part's body: `header` without its last byte (an empty commit array), the array header of
 * the part's commits, then their bytes in `whole`; `offsets` (where each starts in `whole`, then
 * where the last ends) is rebased onto the new body.
 */
function partBody(header: Uint8Array, whole: Uint8Array, offsets: Uint32Array): Uint8Array {
  const count = offsets.length - 1;
  const start = offsets[0];
  const length = offsets[count] - start;
  const countBytes = count < 0x10 ? 1 : count < 0x10000 ? 3 : 5;
  const at = header.length - 1 + countBytes;
  const body = new Uint8Array(at + length);
  body.set(header.subarray(0, header.length - 1));
  const view = new DataView(body.buffer);
  if (countBytes === 1) body[at - 1] = 0x90 | count;
  else if (countBytes === 3) {
    body[at - 3] = 0xdc;
    view.setUint16(at - 2, count);
  } else {
    body[at - 5] = 0xdd;
    view.setUint32(at - 4, count);
  }
  body.set(whole.subarray(start, start + length), at);
  for (let i = 0; i <= count; i++) offsets[i] = offsets[i] - start + at;
  return body;
}

/**
 * The binary payload of a log frame or network message: `[body, signature]`. Without the body
 * at hand it is written again from the block's fields — the same bytes, as bodies are canonical.
 */
export function encodeBlock(
  sealed: { readonly block: Block; readonly body?: Uint8Array },
): Uint8Array {
  return encodeBlockPayload(sealed.body ?? blockBody(sealed.block), sealed.block.signature);
}

/** encodeBlock for a body and signature at hand. */
export function encodeBlockPayload(body: Uint8Array, signature: Uint8Array): Uint8Array {
  const out = new Uint8Array(blockPayloadLength(body, signature));
  writeBlockPayload(body, signature, out, 0);
  return out;
}

/** The length of the payload encodeBlock writes for this body and signature. */
export function blockPayloadLength(body: Uint8Array, signature: Uint8Array): number {
  return 1 + binHeaderLength(body.length) + body.length + binHeaderLength(signature.length) +
    signature.length;
}

/**
 * Writes the payload `[body, signature]` (a MessagePack array of two byte strings, as any
 * MessagePack encoder writes it) into `out` at `at`, copying the body once; returns the end.
 */
export function writeBlockPayload(
  body: Uint8Array,
  signature: Uint8Array,
  out: Uint8Array,
  at: number,
): number {
  out[at] = 0x92;
  let position = writeBinHeader(out, at + 1, body.length);
  out.set(body, position);
  position = writeBinHeader(out, position + body.length, signature.length);
  out.set(signature, position);
  return position + signature.length;
}

/**
 * Decodes and validates a block from untrusted bytes. Any defect is E_CORRUPT_ENCODING; the
 * signature is not checked here (see verifyBlock).
 */
export async function decodeBlock(
  bytes: Uint8Array,
  suite: CryptoSuite,
  checkCanonical = true,
): Promise<SealedBlock> {
  const [body, signature] = frameParts(unpackBytes(bytes, "block"));
  const fields = fieldsFromBody(body);
  // One encoding per block: the JSON form can then re-create these exact bytes (so the signature
  // still verifies), and equal contents always have equal hashes. Skipped (checkCanonical false)
  // only for a log this database wrote itself; it costs about half of decoding.
  const commitOffsets = checkCanonical ? new Uint32Array(fields.commits.length + 1) : undefined;
  if (commitOffsets && !bytesEqual(blockBody(fields, commitOffsets), body)) {
    throw corrupt("block: body is not canonically encoded");
  }
  return { block: { ...fields, signature }, body, ...await digestOf(body, suite), commitOffsets };
}

export function blockToJson(sealed: SealedBlock): BlockJson {
  const { session, publicKey, seq, prev, signature, commits, version } = sealed.block;
  return {
    v: version ?? BLOCK_FORMAT_VERSION,
    session,
    publicKey: toBase64Url(publicKey),
    seq,
    prev,
    sig: toBase64Url(signature),
    commits: commits.map(commitToJson),
  };
}

/** Validates a parsed JSON block and re-creates its canonical body. */
export async function blockFromJson(json: unknown, suite: CryptoSuite): Promise<SealedBlock> {
  if (!isPlainObject(json)) throw corrupt("block: expected a JSON object");
  const version = checkedVersion(json.v);
  assertSessionId(json.session);
  if (!Array.isArray(json.commits)) throw corrupt("block.commits: expected an array");
  const fields = checkedFields(
    version,
    json.session,
    bytesFromBase64Url(json.publicKey, "block.publicKey"),
    json.seq,
    json.prev,
    json.commits.map(commitFromJson),
  );
  const signature = checkedSignature(bytesFromBase64Url(json.sig, "block.sig"));
  const commitOffsets = new Uint32Array(fields.commits.length + 1);
  const body = blockBody(fields, commitOffsets);
  return { block: { ...fields, signature }, body, ...await digestOf(body, suite), commitOffsets };
}

/**
 * Checks the author's signature: E_BAD_SIGNATURE when it is missing or does not verify,
 * E_BAD_KEY when the session id is not the public key's. Trusted mode does not call this.
 */
export async function verifyBlock(
  sealed: SealedBlock,
  suite: CryptoSuite,
  options?: VerifyOptions,
): Promise<void> {
  const { session, publicKey, signature } = sealed.block;
  if (signature.length === 0) throw new CairnError("E_BAD_SIGNATURE", "block is not signed");
  if (await sessionIdFromPublicKey(publicKey, suite) !== session) {
    throw new CairnError("E_BAD_KEY", `block: session ${session} is not its public key's`);
  }
  if (!await suite.ed25519.verify(publicKey, signature, sealed.digest, options)) {
    throw new CairnError("E_BAD_SIGNATURE", `block ${session}/${sealed.block.seq}: bad signature`);
  }
}

/** `prev` of a chain's first block in a chain begun before chains were bound to a repository. */
export const UNBOUND = "";

/**
 * What `prev` of a chain's first block in `repository` must be: the repository's path, or, for a
 * block that says it is of a chain bound to none (UNBOUND), that. Whether such a chain is taken is
 * the importer's choice (a sync server may refuse new ones).
 */
export function chainStart(block: Pick<Block, "prev">, repository: string): string {
  return block.prev === UNBOUND ? UNBOUND : repository;
}

/**
 * Checks that a block is the next one of its session's chain, given what the chain holds so far
 * (undefined: nothing yet). Throws E_CHAIN_GAP when blocks are missing before it, E_CHAIN_STALE
 * when it is at or behind the tip and not a fork of it, E_CHAIN_FORK when it contradicts the chain.
 */
export function checkChain(
  previous: ChainTip | undefined,
  sealed: SealedBlock,
  repository: string,
): void {
  const tip = previous ?? { seq: 0, hash: chainStart(sealed.block, repository), lastCommitSeq: 0 };
  const { session, seq, prev, commits } = sealed.block;
  const where = `block ${session}/${seq}`;
  if (seq > tip.seq + 1) {
    throw new CairnError("E_CHAIN_GAP", `${where}: chain holds up to ${tip.seq}`);
  }
  if (seq === tip.seq && sealed.hash !== tip.hash) {
    throw new CairnError("E_CHAIN_FORK", `${where}: differs from the block held at that seq`);
  }
  if (seq <= tip.seq) {
    throw new CairnError("E_CHAIN_STALE", `${where}: chain already at ${tip.seq}`);
  }
  if (prev !== tip.hash) {
    throw new CairnError(
      "E_CHAIN_FORK",
      seq === 1
        ? `${where}: the first block of a chain in ${prev}, not in ${repository}`
        : `${where}: prev does not name the previous block`,
    );
  }
  const expected = tip.lastCommitSeq + 1;
  if (commits[0].seq !== expected) {
    throw new CairnError(
      "E_CHAIN_FORK",
      `${where}: first commit seq ${commits[0].seq}, not ${expected}`,
    );
  }
}

async function digestOf(
  body: Uint8Array,
  suite: CryptoSuite,
): Promise<{ digest: Uint8Array; hash: string }> {
  const digest = await suite.sha256(body);
  return { digest, hash: toBase64Url(digest) };
}

/** The frame's `[body, signature]`, copied out of the input so later reuse of it cannot alter them. */
function frameParts(frame: unknown): [Uint8Array, Uint8Array] {
  if (!Array.isArray(frame) || frame.length !== 2) {
    throw corrupt("block: expected a [body, signature] pair");
  }
  const [body, signature] = frame;
  if (!(body instanceof Uint8Array)) throw corrupt("block: body must be bytes");
  return [new Uint8Array(body), checkedSignature(signature)];
}

function fieldsFromBody(body: Uint8Array): BlockFields {
  const tuple = unpackBytes(body, "block body");
  if (!Array.isArray(tuple) || tuple.length !== 6) {
    throw corrupt("block body: expected an array of 6 fields");
  }
  const [v, session, publicKey, seq, prev, commitTuples] = tuple;
  const version = checkedVersion(v);
  if (!Array.isArray(commitTuples)) throw corrupt("block.commits: expected an array");
  // A version 2 commit takes its session from the block: checked before any commit is read.
  assertSessionId(session);
  const commits = version === 1
    ? commitTuples.map(commitFromTuple)
    : commitTuples.map((commit) => blockCommitFromTuple(commit, session));
  return checkedFields(version, session, publicKey, seq, prev, commits);
}

function assertSessionId(session: unknown): asserts session is string {
  assertString(session, "block.session");
  if (!SESSION_ID_PATTERN.test(session)) throw corrupt("block.session: not a session id");
}

/** The fields of a block whose version and session id are checked already. */
function checkedFields(
  version: BlockVersion,
  session: string,
  publicKey: unknown,
  seq: unknown,
  prev: unknown,
  commits: Commit[],
): BlockFields {
  assertPositiveInteger(seq, "block.seq");
  assertString(prev, "block.prev");
  if (seq === 1 ? prev !== UNBOUND && !isRepositoryPath(prev) : !BLOCK_HASH_PATTERN.test(prev)) {
    throw corrupt("block.prev: for seq 1 a repository path (or empty), else a block hash");
  }
  checkCommits(session, commits);
  const fields: BlockFields = {
    session,
    publicKey: checkedBytes(publicKey, PUBLIC_KEY_BYTES, "block.publicKey"),
    seq,
    prev,
    commits,
  };
  // The current layout is left implicit, as in a block sealed here.
  return version === BLOCK_FORMAT_VERSION ? fields : { ...fields, version };
}

/** A block's commits: at least one, all by its session, commit seqs strictly increasing. */
function checkCommits(session: string, commits: readonly Commit[]): void {
  if (commits.length === 0) throw corrupt("block.commits: a block holds at least one commit");
  let lastSeq = 0;
  for (const commit of commits) {
    if (commit.session !== session) throw corrupt(`block.commits: a commit by ${commit.session}`);
    if (commit.seq <= lastSeq) throw corrupt("block.commits: seqs must strictly increase");
    lastSeq = commit.seq;
  }
}

function checkedSignature(value: unknown): Uint8Array {
  return value instanceof Uint8Array && value.length === 0
    ? UNSIGNED
    : checkedBytes(value, SIGNATURE_BYTES, "block.signature");
}

/** A plain copy of `value` if it is `length` bytes (a Node Buffer becomes a Uint8Array). */
function checkedBytes(value: unknown, length: number, where: string): Uint8Array {
  if (!(value instanceof Uint8Array) || value.length !== length) {
    throw corrupt(`${where}: expected ${length} bytes`);
  }
  return new Uint8Array(value);
}

function bytesFromBase64Url(value: unknown, where: string): Uint8Array {
  assertString(value, where);
  const bytes = fromBase64Url(value);
  if (!bytes) throw corrupt(`${where}: not base64url`);
  return bytes;
}

function checkedVersion(version: unknown): BlockVersion {
  if (version !== 1 && version !== 2) {
    throw corrupt(`block: unsupported format version ${String(version)}`);
  }
  return version;
}
