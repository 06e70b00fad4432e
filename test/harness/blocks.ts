/** fast-check generators and fixtures for blocks (src/core/block.ts). */
import fc from "fast-check";
import type { BlockFields, SealedBlock } from "../../src/core/block.ts";
import { sealBlock, sessionIdFromPublicKey } from "../../src/core/block.ts";
import type { Commit } from "../../src/core/commit.ts";
import type { CryptoSuite, SigningKey } from "../../src/core/signing.ts";
import { commit } from "./arbitrary.ts";

/** A session able to author blocks. */
export interface Author {
  readonly key: SigningKey;
  readonly session: string;
}

export async function newAuthor(suite: CryptoSuite): Promise<Author> {
  const key = await suite.ed25519.generate();
  return { key, session: await sessionIdFromPublicKey(key.publicKey, suite) };
}

/** A well-formed block hash (base64url of 32 bytes), for a `prev` that names no real block. */
export const blockHash: fc.Arbitrary<string> = fc.stringMatching(/^[A-Za-z0-9_-]{43}$/);

/** Any valid block of `author`: 1–5 arbitrary commits, re-authored with increasing seqs. */
export function blockFields(author: Author): fc.Arbitrary<BlockFields> {
  return fc.record({
    seq: fc.integer({ min: 1, max: 1e6 }),
    prev: blockHash,
    firstCommitSeq: fc.integer({ min: 1, max: 1e9 }),
    commits: fc.array(
      fc.tuple(commit, fc.integer({ min: 1, max: 3 })),
      { minLength: 1, maxLength: 5 },
    ),
  }).map(({ seq, prev, firstCommitSeq, commits }) => {
    let commitSeq = firstCommitSeq;
    const authored = commits.map(([c, step], i): Commit => {
      if (i > 0) commitSeq += step;
      return { ...c, session: author.session, seq: commitSeq };
    });
    return {
      session: author.session,
      publicKey: author.key.publicKey,
      seq,
      prev: seq === 1 ? "" : prev,
      commits: authored,
    };
  });
}

/**
 * `count` trusted (unsigned) blocks chained by a new session, one create each, its title padded
 * with `padding(seq)` characters so that records differ in size (a torn or windowed record can
 * then end anywhere).
 */
export async function trustedChain(
  suite: CryptoSuite,
  count: number,
  padding: (seq: number) => number,
): Promise<SealedBlock[]> {
  const author = await newAuthor(suite);
  const blocks: SealedBlock[] = [];
  for (let seq = 1; seq <= count; seq++) {
    const fields = {
      session: author.session,
      publicKey: author.key.publicKey,
      seq,
      prev: blocks[seq - 2]?.hash ?? "",
      commits: [{
        session: author.session,
        seq,
        key: `k${seq}`,
        hlc: 1_790_000_000_000 * 1024 + seq,
        parents: [],
        schema: "task@1",
        kind: "value" as const,
        value: { title: `item ${seq} ${"x".repeat(padding(seq))}` },
      }],
    };
    blocks.push(await sealBlock(fields, null, suite));
  }
  return blocks;
}

/**
 * The fields of `author`'s first block (unbound: `prev` ""): one create of "big" whose title is
 * `repeats` copies of "a long title " — a record of `13 × repeats` bytes and a little more.
 */
export function bigBlockFields(author: Author, repeats: number): BlockFields {
  return {
    session: author.session,
    publicKey: author.key.publicKey,
    seq: 1,
    prev: "",
    commits: [{
      session: author.session,
      seq: 1,
      key: "big",
      hlc: 1_790_000_000_000 * 1024,
      parents: [],
      schema: "task@1",
      kind: "value",
      value: { title: "a long title ".repeat(repeats) },
    }],
  };
}
