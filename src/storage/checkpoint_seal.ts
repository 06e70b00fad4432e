/**
 * The seal in a checkpoint's header (issue #15): the SHA-256 digest of the rest of the file and
 * an Ed25519 signature of it by the database's session key, for one repository. A checkpoint is
 * served as the repository's state without replaying the log, so a CRC that anyone can recompute
 * is not enough: an edited checkpoint would be served while peers get the signed log's values.
 * With the seal, a checkpoint is exactly as strong as the log the session signs (docs/storage.md,
 * "What a checkpoint guarantees").
 *
 * The signed message is not the bare digest, which is what a block's signature covers, but
 *
 *   "cairn checkpoint v3", u32 little-endian byte length of the repository path, the path
 *   (UTF-8), the 32-byte digest
 *
 * so a checkpoint cannot be taken for another repository's, and no checkpoint signature is a
 * block signature or the other way round (a block signs exactly 32 bytes). The digest is kept
 * next to the signature so that damage ("checksum mismatch") is told apart from a file signed by
 * another key or for another repository.
 */
import { CairnError } from "../core/errors.ts";
import {
  type CryptoSuite,
  DIGEST_BYTES,
  SIGNATURE_BYTES,
  type SigningKey,
} from "../core/signing.ts";
import { corrupt } from "../core/wire_validation.ts";

/** Bytes the seal takes in the header: the digest, then the signature. */
export const SEAL_LENGTH = DIGEST_BYTES + SIGNATURE_BYTES;

const DOMAIN_TAG = new TextEncoder().encode("cairn checkpoint v3");

/** Whose checkpoint it is: the session key, the repository's path, and the runtime's crypto. */
export interface CheckpointOwner {
  readonly key: SigningKey;
  readonly repository: string;
  readonly suite: CryptoSuite;
}

/** Writes the seal of `file` at `at`: it covers every byte from `from` to the end. */
export async function writeSeal(
  file: Uint8Array,
  at: number,
  from: number,
  owner: CheckpointOwner,
): Promise<void> {
  const digest = await owner.suite.sha256(file.subarray(from));
  const signature = await owner.suite.ed25519.sign(owner.key, signedMessage(owner, digest));
  file.set(digest, at);
  file.set(signature, at + DIGEST_BYTES);
}

/**
 * Checks the seal at `at`: E_CORRUPT_ENCODING when the bytes from `from` on do not have the
 * recorded digest, E_BAD_SIGNATURE when the signature is not the owner's for this repository.
 */
export async function checkSeal(
  file: Uint8Array,
  at: number,
  from: number,
  owner: CheckpointOwner,
): Promise<void> {
  const digest = await owner.suite.sha256(file.subarray(from));
  const recorded = file.subarray(at, at + DIGEST_BYTES);
  if (digest.some((byte, i) => byte !== recorded[i])) {
    throw corrupt("checkpoint: checksum mismatch");
  }
  const signature = file.subarray(at + DIGEST_BYTES, at + SEAL_LENGTH);
  const { suite, key, repository } = owner;
  if (!await suite.ed25519.verify(key.publicKey, signature, signedMessage(owner, digest))) {
    throw new CairnError(
      "E_BAD_SIGNATURE",
      `checkpoint: not signed by this database's session for ${repository}`,
    );
  }
}

/** What the session signs for a checkpoint of `owner.repository` whose digest is `digest`. */
function signedMessage(owner: CheckpointOwner, digest: Uint8Array): Uint8Array {
  const path = new TextEncoder().encode(owner.repository);
  const message = new Uint8Array(DOMAIN_TAG.length + 4 + path.length + DIGEST_BYTES);
  message.set(DOMAIN_TAG);
  new DataView(message.buffer).setUint32(DOMAIN_TAG.length, path.length, true);
  message.set(path, DOMAIN_TAG.length + 4);
  message.set(digest, DOMAIN_TAG.length + 4 + path.length);
  return message;
}
