/**
 * node_crypto.ts in the package's browser builds (scripts/lib/bundles.ts puts this module in its
 * place there): a page has no node:crypto, so it ships none of the code that would use one.
 */
import type { CryptoSuite } from "../core/signing.ts";

export function nodeCryptoSuite(): Promise<CryptoSuite | undefined> {
  return Promise.resolve(undefined);
}
