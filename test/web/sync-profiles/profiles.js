// Driven by scripts/lib/browser_sync_pages.ts, one page in each of two browser profiles (two
// persistent contexts: separate OPFS, separate sessions), plus a client in the runner's process:
//   ?phase=write   opens the stored database <db>, syncs it with <server>, writes NOTES notes titled
//                  "<name> <i>", and waits until it holds the notes of every name in <expect>;
//   ?phase=reopen  opens the same database again with sync off: what arrived was stored.
// Each phase reports through document.body.dataset.status ("ok" or "failed") and #out, where an
// ok phase lists every title it holds, sorted, as JSON.
import { Cairn, defineSchema, sync } from "../../../dist/browser/cairn.js";

const Note = defineSchema({
  ns: "note",
  version: 1,
  fields: { title: { type: "string", required: true }, body: { type: "text" } },
});
const NOTES = 3;
const REPOSITORY = "/data/profiles";
const WAIT_MS = 20_000;

const params = new URL(location.href).searchParams;
const [phase, server, name, db] = ["phase", "server", "name", "db"].map((key) => params.get(key));
const expect = (params.get("expect") ?? "").split(",");

function report(status, message) {
  document.getElementById("out").textContent = status === "ok" ? message : `failed: ${message}`;
  document.body.dataset.status = status;
}

function titles(notes) {
  return [...notes.keys()].map((key) => notes.get(key, Note).get("title")).sort();
}

async function write() {
  const database = await Cairn.open({ path: db, schemas: [Note] });
  const link = sync(database, server, { backoff: { initialMs: 10, maxMs: 200 } });
  const notes = await database.open(REPOSITORY);
  for (let i = 0; i < NOTES; i++) notes.create(Note, { title: `${name} ${i}`, body: name });
  await link.synced();
  const deadline = Date.now() + WAIT_MS;
  while (notes.count() < NOTES * expect.length) {
    if (Date.now() > deadline) {
      throw new Error(`waited for ${NOTES * expect.length} notes, holds ${titles(notes)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const held = titles(notes);
  await link.close();
  await database.close();
  return held;
}

async function reopen() {
  const database = await Cairn.open({ path: db, schemas: [Note] });
  const held = titles(await database.open(REPOSITORY));
  await database.close();
  return held;
}

try {
  const run = { write, reopen }[phase];
  if (!run) throw new Error(`unknown phase ${phase}`);
  report("ok", JSON.stringify(await run()));
} catch (err) {
  report("failed", err?.stack ?? String(err));
}
