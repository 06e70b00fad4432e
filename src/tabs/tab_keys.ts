/**
 * The session key each tab of a stored database signs with. The pool is derived, not stored:
 * key 0 is the database's stored session secret (a database open in one tab signs as it always
 * has), and key i > 0 is SHA-256 of a fixed label, the stored secret and i. A tab claims index i
 * with a Web Lock for its life (key_pool.ts), so no two tabs seal blocks for one key, and a
 * reloaded page that finds its old index free signs as the same session again: sessions grow
 * with the most tabs open at once, never with reloads.
 */
import { CairnError } from "../core/errors.ts";
import type { CryptoSuite } from "../core/signing.ts";

/** The most tabs that may hold one database open at once. */
export const MAX_TABS = 16;

const LABEL = new TextEncoder().encode("cairn tab session key");

/** The 32-byte secret seed of pool key `index`. */
export async function tabSecret(
  suite: CryptoSuite,
  storedSecret: Uint8Array,
  index: number,
): Promise<Uint8Array> {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_TABS) {
    throw new CairnError("E_BAD_ARGUMENT", `a tab key index is 0 to ${MAX_TABS - 1}, got ${index}`);
  }
  if (index === 0) return storedSecret.slice();
  const input = new Uint8Array(LABEL.length + storedSecret.length + 4);
  input.set(LABEL);
  input.set(storedSecret, LABEL.length);
  new DataView(input.buffer).setUint32(LABEL.length + storedSecret.length, index);
  return await suite.sha256(input);
}
