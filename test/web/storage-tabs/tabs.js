// One tab of a database shared by several tabs (docs/browser.md, "Many tabs"), driven by
// scripts/lib/browser_tabs_pages.ts: `?db=NAME&name=A` opens the database (durable) and its
// repository /notes (with `&sync=ws://…`, also syncs it with that server), then exposes steps as
// globalThis.cairnTabs:
//   write(n)   creates n notes titled "<name> <i>" and resolves once flush() resolves, that is
//              once the tab that leads has persisted them;
//   flushAll() resolves once db.flush() does: in a follower, once the tab that leads has stored
//              its writes and flushed all it stores;
//   titles()   every title this tab sees, sorted, as JSON;
//   session()  the session id this tab signs as;
//   leaderLock() the browser's id of the client (page) holding the database's leader lock;
//   syncStatus() the sync link's status; synced() resolves once the server holds this tab's
//              writes;
//   close()    closes the sync link and the database;
//   remove()   removes the database's directory (the last step of a check).
// The open reports through document.body.dataset.status ("ok" or "failed") and #out.
import { Cairn, defineSchema, sync } from "../../../dist/browser/cairn.js";

const Note = defineSchema({
  ns: "tabs-note",
  version: 1,
  fields: { title: { type: "string", required: true } },
});
const REPOSITORY = "/notes";

const params = new URL(location.href).searchParams;
const db = params.get("db") ?? "";
const name = params.get("name") ?? "";
const server = params.get("sync");

function report(status, message) {
  document.getElementById("out").textContent = `${status}: ${message}`;
  document.body.dataset.status = status;
}

async function main() {
  if (!/^[\w-]+$/.test(db)) throw new Error(`db must be a plain directory name, got "${db}"`);
  if (!/^\w+$/.test(name)) throw new Error(`name must be a word, got "${name}"`);
  const database = await Cairn.open({ path: db, durability: "durable" });
  const notes = await database.open(REPOSITORY);
  const link = server ? sync(database, server) : undefined;
  let written = 0;
  globalThis.cairnTabs = {
    async write(count) {
      for (let i = 0; i < count; i++) notes.create(Note, { title: `${name} ${written++}` });
      await notes.flush();
      return `tab ${name} wrote ${count} notes, acknowledged`;
    },
    async flushAll() {
      await database.flush();
      return `tab ${name}: the database is flushed`;
    },
    titles: () =>
      JSON.stringify([...notes.keys()].map((key) => notes.get(key, Note).get("title")).sort()),
    session: () => database.session.id,
    syncStatus: () => link?.status ?? "no sync",
    async synced() {
      await link.synced();
      return `tab ${name}: the server holds its writes`;
    },
    async leaderLock() {
      const { held = [] } = await navigator.locks.query();
      return held.find((lock) => lock.name === `cairn:leader:${db}`)?.clientId ?? "";
    },
    async close() {
      await link?.close();
      await database.close();
      return `tab ${name} closed the database`;
    },
    async remove() {
      const root = await navigator.storage.getDirectory();
      await root.removeEntry(db, { recursive: true });
      return `removed ${db}`;
    },
  };
  return `tab ${name} opened the database as session ${database.session.id}`;
}

main().then(
  (message) => report("ok", message),
  (err) => report("failed", err?.stack ?? String(err)),
);
