/**
 * Repositories made directly (below the database layer) for tests of repo/ and storage/: in
 * memory, trusted (no signing), with the given schema registered.
 */
import { HybridClock } from "../../src/core/hlc.ts";
import { SchemaRegistry } from "../../src/core/schema.ts";
import type { FieldDefs, Schema } from "../../src/core/schema_types.ts";
import { Repository } from "../../src/repo/repository.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";

const suite = await cryptoSuite();

export function trustedRepository<F extends FieldDefs>(
  path: string,
  session: string,
  schema: Schema<F>,
): Repository {
  const registry = new SchemaRegistry();
  registry.register(schema);
  return trustedRepositoryOn(path, session, registry);
}

/** A trusted in-memory repository on `registry`, which the test may register more schemas in. */
export function trustedRepositoryOn(
  path: string,
  session: string,
  registry: SchemaRegistry,
): Repository {
  return new Repository(path, {
    session,
    publicKey: new Uint8Array(32),
    signer: null,
    suite,
    registry,
    clock: new HybridClock(),
    isTrusted: () => true,
  });
}
