/** A repository stand-in for query-layer tests: a map of item values and change listeners. */
import type { FieldRecord } from "../../src/core/commit.ts";
import type { ItemChange } from "../../src/repo/change_listeners.ts";
import type { ItemValue } from "../../src/repo/leaf_merge.ts";
import type { QuerySource } from "../../src/query/registry.ts";

export class FakeSource implements QuerySource {
  readonly map = new Map<string, ItemValue>();
  readonly listeners = new Set<(change: ItemChange) => void>();
  items() {
    return this.map;
  }
  value(key: string) {
    const v = this.map.get(key);
    return v?.wire === undefined ? undefined : v;
  }
  onChange(listener: (change: ItemChange) => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  /** Stores the item's new value (undefined: deleted) and tells the listeners. */
  write(key: string, wire: FieldRecord | undefined, schema = "t@1") {
    this.map.set(key, { wire, schema });
    for (const l of this.listeners) l({ key, source: "local", deleted: wire === undefined });
  }
}
