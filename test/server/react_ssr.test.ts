/**
 * cairndb/react on a server: renderToString (react-dom/server) takes every hook's server snapshot,
 * so a page rendered from an in-memory database shows its data in the first HTML. On Node the
 * bindings come from the built package (dist/react.js importing "cairndb"), which also proves they
 * share the app's one copy of Cairn: the CairnError they throw is the app's CairnError.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createElement, Suspense, use } from "react";
import { renderToString } from "react-dom/server";
import { Cairn, defineSchema, isCairnError } from "cairndb";
import {
  CairnProvider,
  useDatabase,
  useItem,
  useQuery,
  useRepository,
  useSyncStatus,
} from "cairndb/react";
import { captureUncaught } from "../harness/peers.ts";
import { TITLE_AND_DONE } from "../harness/schemas.ts";

const Task = defineSchema(TITLE_AND_DONE);

function TaskList() {
  const repo = useRepository("/tasks");
  const open = useQuery(repo, { schema: Task, where: { done: false }, sortBy: "title" });
  const first = useItem(repo, "t1", Task);
  const status = useSyncStatus(undefined);
  if (repo === undefined) return createElement("p", null, "opening");
  return createElement(
    "div",
    null,
    createElement("h1", null, first?.title ?? "no first task"),
    createElement("ul", null, ...open.map((task) => createElement("li", null, task.get("title")))),
    createElement("footer", null, `sync: ${status ?? "none"}`),
  );
}

test("renderToString: hooks read the server snapshot of repositories handed to the provider", async () => {
  const db = await Cairn.open({ schemas: [Task] });
  try {
    const repo = await db.open("/tasks");
    repo.create(Task, { title: "water the plants", done: false }, { key: "t1" });
    repo.create(Task, { title: "buy bread", done: false }, { key: "t2" });
    repo.create(Task, { title: "file taxes", done: true }, { key: "t3" });
    const html = renderToString(
      createElement(CairnProvider, { database: db, repositories: [repo] }, createElement(TaskList)),
    );
    assert.equal(
      html,
      "<div><h1>water the plants</h1><ul><li>buy bread</li><li>water the plants</li></ul>" +
        "<footer>sync: none</footer></div>",
    );
  } finally {
    await db.close();
  }
});

test("renderToString: a repository not handed to the provider is still opening", async () => {
  const db = await Cairn.open({ schemas: [Task] });
  try {
    const html = renderToString(
      createElement(CairnProvider, { database: db }, createElement(TaskList)),
    );
    assert.equal(html, "<p>opening</p>");
  } finally {
    await db.close();
  }
});

test("CairnProvider refuses a repository of another database (E_BAD_ARGUMENT), and anything not a repository", async () => {
  const [ours, theirs] = await Promise.all([
    Cairn.open({ schemas: [Task] }),
    Cairn.open({ schemas: [Task] }),
  ]);
  try {
    const foreign = await theirs.open("/tasks");
    foreign.create(Task, { title: "someone else's", done: false }, { key: "t1" });
    const page = (repositories: unknown[]) =>
      renderToString(
        createElement(
          CairnProvider,
          { database: ours, repositories: repositories as never[] },
          createElement(TaskList),
        ),
      );
    // Before, the page showed the other database's item, and writes through it went there.
    assert.throws(
      () => page([foreign]),
      (err) =>
        isCairnError(err, "E_BAD_ARGUMENT") && /\/tasks is another database's/.test(err.message),
    );
    assert.throws(
      () => page([{ path: "/tasks", closed: false }]),
      (err) => isCairnError(err, "E_BAD_ARGUMENT") && /not a repository/.test(err.message),
    );
    assert.equal(foreign.database, theirs);
    assert.equal((await ours.open("/tasks")).database, ours);
    assert.equal(
      page([await ours.open("/tasks")]),
      "<div><h1>no first task</h1><ul></ul><footer>sync: none</footer></div>",
    );
  } finally {
    await Promise.all([ours.close(), theirs.close()]);
  }
});

test("useItem: an item another device wrote under a schema this app lacks is undefined, not thrown", async () => {
  const TaskV2 = defineSchema({
    ns: TITLE_AND_DONE.ns,
    version: 2,
    from: Task,
    fields: { ...TITLE_AND_DONE.fields, due: { type: "date" } },
  });
  const newer = await Cairn.open({ trusted: true, schemas: [Task, TaskV2] });
  const older = await Cairn.open({ trusted: true, schemas: [Task] });
  try {
    const theirs = await newer.open("/tasks");
    const ours = await older.open("/tasks");
    theirs.create(Task, { title: "old", done: false }, { key: "t1" });
    theirs.create(TaskV2, { title: "new", done: false }, { key: "t2" });
    await ours.importBlocks(await theirs.exportBlocks());
    const Row = (props: { taskKey: string; schema?: typeof Task }) => {
      const task = useItem(ours, props.taskKey, props.schema);
      return createElement("li", null, task ? String(task.title) : "unavailable");
    };
    const rows = ["t1", "t2"].flatMap((taskKey) => [
      createElement(Row, { taskKey }),
      createElement(Row, { taskKey, schema: Task }),
    ]);
    const html = renderToString(
      createElement(CairnProvider, { database: older }, createElement("ul", null, ...rows)),
    );
    assert.equal(
      html,
      "<ul><li>old</li><li>old</li><li>unavailable</li><li>unavailable</li></ul>",
    );
  } finally {
    await Promise.all([newer.close(), older.close()]);
  }
});

test("useDatabase outside a CairnProvider throws the app's own CairnError (E_BAD_ARGUMENT)", () => {
  function Orphan() {
    useDatabase();
    return null;
  }
  assert.throws(
    () => renderToString(createElement(Orphan)),
    (err) => isCairnError(err, "E_BAD_ARGUMENT") && /CairnProvider/.test(err.message),
  );
});

test("renderToString: a write after the render that makes a hook's where function throw is no uncaught error (the server process ended)", async () => {
  const db = await Cairn.open({ schemas: [Task] });
  try {
    const repo = await db.open("/tasks");
    repo.create(Task, { title: "hello", done: false });
    const Titles = () => {
      const shown = useQuery(repo, {
        schema: Task,
        where: (task) => {
          if (task.get("title") === "bad") throw new Error("cannot judge it");
          return true;
        },
        id: "judged-tasks",
      });
      return createElement("p", null, shown.length);
    };
    const html = renderToString(
      createElement(CairnProvider, { database: db, repositories: [repo] }, createElement(Titles)),
    );
    assert.equal(html, "<p>1</p>");
    // No effect runs on a server, so nothing holds the query the hook made; it still follows
    // writes until it closes. This one, a moment later, makes the where function throw: it
    // ended a server process before.
    const uncaught = await captureUncaught(async () => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      repo.create(Task, { title: "bad", done: false });
    });
    assert.deepEqual(uncaught, []);
  } finally {
    await db.close();
  }
});

test("renderToString: a query the app keeps itself still reports a failure nobody listens to as uncaught, after a hook showed it", async () => {
  const db = await Cairn.open({ schemas: [Task] });
  try {
    const repo = await db.open("/tasks");
    const options = {
      schema: Task,
      where: (task: { get(field: "title"): string | undefined }) => {
        if (task.get("title") === "bad") throw new Error("cannot judge it");
        return true;
      },
      id: "kept-by-the-app",
    };
    repo.query(options); // kept: the app's to close and to listen to
    const Titles = () => createElement("p", null, useQuery(repo, options).length);
    renderToString(
      createElement(CairnProvider, { database: db, repositories: [repo] }, createElement(Titles)),
    );
    const uncaught = await captureUncaught(() => {
      repo.create(Task, { title: "bad", done: false });
    });
    // Silenced for good by the hook before, as the hook's own queries are.
    assert.equal(uncaught.length, 1);
    assert.ok(isCairnError(uncaught[0], "E_QUERY_FAILED"), String(uncaught[0]));
  } finally {
    await db.close();
  }
});

test("renderToString: a Suspense page using a held query's ready renders the results, not the fallback", async () => {
  const db = await Cairn.open({ schemas: [Task] });
  try {
    const repo = await db.open("/tasks");
    repo.create(Task, { title: "water the plants", done: false });
    const Open = () => {
      const query = repo.query({ schema: Task, where: { done: false } }, { whileHeld: true });
      return createElement("p", null, `${use(query.ready).length} open`);
    };
    const page = createElement(Suspense, { fallback: createElement("p", null, "loading") }, [
      createElement(Open, { key: "open" }),
    ]);
    // The fallback, with a note that renderToString does not support Suspense, before: `use`
    // suspends once on a plain promise, however early it resolved.
    assert.equal(renderToString(page), "<!--$--><p>1 open</p><!--/$-->");
  } finally {
    await db.close();
  }
});
