/**
 * A trusted writer whose commits are written by hand, not through the item API: for tests of
 * commits an honest client would not make (the graph and schema checks, the merge of odd leaves).
 */
import { encodeBlockPayload, sealBlock, sessionIdFromPublicKey } from "../../src/core/block.ts";
import type { Commit, FieldRecord } from "../../src/core/commit.ts";
import { toBase64Url } from "../../src/core/bytes.ts";
import type { CryptoSuite, SigningKey } from "../../src/core/signing.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";

export class CraftingAuthor {
  #seq = 0;
  #blockSeq = 1;
  #prev = "";
  #hlc = Date.now() * 1024;

  private constructor(
    readonly key: SigningKey,
    readonly session: string,
    readonly suite: CryptoSuite,
  ) {}

  static async make(): Promise<CraftingAuthor> {
    const suite = await cryptoSuite();
    const key = await suite.ed25519.generate();
    return new CraftingAuthor(key, await sessionIdFromPublicKey(key.publicKey, suite), suite);
  }

  /** The public key, as `trust` takes it. */
  get trust(): string {
    return toBase64Url(this.key.publicKey);
  }

  /** The id of this author's commit `seq`. */
  id(seq: number): string {
    return `${this.session}.${seq}`;
  }

  value(key: string, schema: string, parents: string[], value: FieldRecord): Commit {
    return { ...this.#next(key, schema, parents), kind: "value", value } as Commit;
  }

  delta(
    key: string,
    schema: string,
    parents: string[],
    set: FieldRecord,
    unset: string[] = [],
  ): Commit {
    return { ...this.#next(key, schema, parents), kind: "delta", set, unset } as Commit;
  }

  del(key: string, schema: string, parents: string[]): Commit {
    return { ...this.#next(key, schema, parents), kind: "delete" } as Commit;
  }

  /**
   * The commits sealed as the next block of this author's chain, as importBlocks takes it. A
   * block the importer refuses leaves a gap: make another author for the next test.
   */
  async block(commits: Commit[]): Promise<Uint8Array> {
    const sealed = await sealBlock(
      {
        session: this.session,
        publicKey: this.key.publicKey,
        seq: this.#blockSeq++,
        prev: this.#prev,
        commits,
      },
      { key: this.key, ed25519: this.suite.ed25519 },
      this.suite,
    );
    this.#prev = sealed.hash;
    return encodeBlockPayload(sealed.body, sealed.block.signature);
  }

  #next(key: string, schema: string, parents: string[]) {
    return { session: this.session, seq: ++this.#seq, key, hlc: ++this.#hlc, parents, schema };
  }
}
