/** A repository stand-in for query-layer tests: a map of item values and change listeners. */
import type { FieldRecord } from "../../src/core/commit.ts";
import type { ItemChange } from "../../src/repo/change_listeners.ts";
import type { ItemValue } from "../../src/core/item_state.ts";
import type { QuerySource } from "../../src/query/registry.ts";

export class FakeSource implements QuerySource {
  readonly map = new Map<string, ItemValue>();
  readonly listeners = new Set<(change: ItemChange) => void>();
  items() {
    return this.map;
  }
  state(key: string) {
    return this.map.get(key);
  }
  onChangeFirst(listener: (change: ItemChange) => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  /** Stores the item's new state (wire undefined: deleted) and tells the listeners. */
  write(key: string, wire: FieldRecord | undefined, schema = "t@1", carry = true) {
    // A new state per write, carrying the records kept with the last one, as a repository does
    // (`carry` false: a state that never had them, which readers must survive).
    const attached = carry ? this.map.get(key)?.attached : undefined;
    this.map.set(key, { wire, schema, attached });
    for (const l of this.listeners) l({ key, source: "local", deleted: wire === undefined });
  }
}
