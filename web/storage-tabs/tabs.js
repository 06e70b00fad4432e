// Driven by scripts/lib/browser_storage_pages.ts with two tabs of one browser context:
//   tab A  ?phase=hold     opens the database, writes a few items, keeps it open;
//   tab B  ?phase=contend  must fail to open it with CairnError E_LOCKED;
//   tab A  cairnTabs.close()  closes its database;
//   tab B  cairnTabs.retry()  must now open it, see tab A's items, then removes the directory.
// A phase reports through document.body.dataset.status ("ok" or "failed") and #out; the two
// steps run later return a message or reject, and also write it to #out.
import { Cairn, defineSchema, isCairnError } from "../../dist/browser/cairn.js";

const Note = defineSchema({
  ns: "tabs-note",
  version: 1,
  fields: { title: { type: "string", required: true }, tags: { type: "set" } },
});
const NOTES = 20;
const REPOSITORY = "/notes";

const params = new URL(location.href).searchParams;
const phase = params.get("phase");
const db = params.get("db") ?? "";

function show(status, message) {
  document.getElementById("out").textContent = `${status}: ${message}`;
}

function report(status, message) {
  show(status, message);
  document.body.dataset.status = status;
}

/** Runs a step the driver calls later: its message or error also lands in #out. */
async function step(run) {
  try {
    const message = await run();
    show("ok", message);
    return message;
  } catch (err) {
    show("failed", err?.stack ?? String(err));
    throw err;
  }
}

async function hold() {
  const database = await Cairn.open({ path: db, durability: "durable" });
  const notes = await database.open(REPOSITORY);
  for (let i = 0; i < NOTES; i++) {
    notes.create(Note, { title: `note ${i}`, tags: new Set([`t${i % 3}`]) }, { key: `n${i}` });
  }
  await notes.flush();
  globalThis.cairnTabs = {
    close: () =>
      step(async () => {
        await database.close();
        return "tab A closed its database";
      }),
  };
  return `tab A holds the database (session ${database.session.id})`;
}

async function contend() {
  try {
    const database = await Cairn.open({ path: db });
    await database.close();
    throw new Error("tab B opened the database while tab A held it (expected E_LOCKED)");
  } catch (err) {
    if (!isCairnError(err, "E_LOCKED")) throw err;
    globalThis.cairnTabs = { retry: () => step(retry) };
    return `tab B got E_LOCKED: ${err.message}`;
  }
}

async function retry() {
  const database = await Cairn.open({ path: db });
  try {
    const notes = await database.open(REPOSITORY);
    const titles = [...notes.keys()].map((key) => notes.get(key, Note).get("title"));
    if (titles.length !== NOTES) {
      throw new Error(`tab B sees ${titles.length} of the ${NOTES} notes tab A wrote`);
    }
    return `tab B opened the database after tab A closed it and sees its ${NOTES} notes`;
  } finally {
    await database.close();
    const root = await navigator.storage.getDirectory();
    await root.removeEntry(db, { recursive: true });
  }
}

async function main() {
  if (!/^[\w-]+$/.test(db)) throw new Error(`db must be a plain directory name, got "${db}"`);
  if (phase === "hold") return await hold();
  if (phase === "contend") return await contend();
  throw new Error(`unknown phase "${phase}"`);
}

main().then(
  (message) => report("ok", message),
  (err) => report("failed", err?.stack ?? String(err)),
);
