// Checked by scripts/lib/browser_tests.ts (EXAMPLE_PAGES): under a CSP that forbids blob:
// workers, Cairn.open of an OPFS database fails with E_IO whose message names the Blob URL and the
// fix, and the fix works: workerUrl pointing at dist/browser/opfs_worker.js, served by the page's
// own origin. The outcome goes to document.body.dataset.status ("ok" or "failed") and #out.
import { Cairn, isCairnError } from "../../../dist/browser/cairn.js";

const path = `cairn-page-csp-${crypto.randomUUID()}`;

function report(status, message) {
  document.getElementById("out").textContent = `${status}: ${message}`;
  document.body.dataset.status = status;
}

async function main() {
  try {
    const db = await Cairn.open({ path });
    await db.close();
    throw new Error("opened with a blob: worker although the page's CSP forbids it");
  } catch (err) {
    if (!isCairnError(err, "E_IO")) throw err;
    for (const part of ["blob:", "worker-src blob:", "workerUrl"]) {
      if (!err.message.includes(part)) {
        throw new Error(`the message lacks "${part}": ${err.message}`);
      }
    }
  }
  const db = await Cairn.open({ path, workerUrl: "/dist/browser/opfs_worker.js" });
  await db.open("/notes");
  await db.close();
  await (await navigator.storage.getDirectory()).removeEntry(path, { recursive: true });
  return "blob: worker refused with E_IO naming the fix; workerUrl opened the database";
}

main().then((message) => report("ok", message), (err) => report("failed", err.stack ?? err));
