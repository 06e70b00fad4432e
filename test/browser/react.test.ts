/**
 * cairndb/react in Chromium with real React 19 (react-dom/client): render counts (one render per
 * batch of changes, none for unrelated writes), referentially stable results, no tearing between
 * components reading one query, and hooks that follow local writes and blocks imported from
 * another database (standing in for other tabs and sync). The server snapshot is tested on Deno
 * and Node (test/server/react_ssr.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Component, createElement, type ReactNode, StrictMode, useMemo, useState } from "react";
import { createRoot, type Root } from "react-dom/client";
import { flushSync } from "react-dom";
import {
  Cairn,
  defineSchema,
  isCairnError,
  type RepositoryHandle,
  type SyncLink,
  type SyncStatus,
} from "cairndb";
import {
  CairnProvider,
  useDatabase,
  useItem,
  useQuery,
  useRepository,
  useSyncStatus,
} from "cairndb/react";
import { openCairnOn } from "../../src/db/database.ts";
import { openOpfsBackend } from "../../src/storage/backends/opfs.ts";
import { FailingCalls, faultyBackend } from "../harness/faulty_backend.ts";
import { closePeers, exchange, openPeers, type Peer } from "../harness/peers.ts";
import { TITLE_AND_DONE } from "../harness/schemas.ts";

const Task = defineSchema(TITLE_AND_DONE);
const Note = defineSchema({
  ns: "react-note",
  version: 1,
  fields: { text: { type: "string", required: true } },
});

/** Lets React commit what the last changes scheduled: change events, then its own microtasks. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

/** A root in a detached container, unmounted (and the peers closed) after `fn`. */
async function withRoot(
  fn: (root: Root, peers: Peer[]) => Promise<void> | void,
  peerCount = 1,
): Promise<void> {
  const peers = await openPeers(peerCount, { schemas: [Task, Note] });
  const root = createRoot(document.createElement("div"));
  const warnings = captureReactWarnings();
  try {
    await fn(root, peers);
    assert.deepEqual(warnings.list, [], "React warned");
  } finally {
    flushSync(() => root.unmount());
    warnings.stop();
    await closePeers(peers);
  }
}

/** console.error calls made by React (its development build warns about uncached snapshots). */
function captureReactWarnings(): { list: string[]; stop(): void } {
  const list: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => {
    list.push(args.map(String).join(" "));
  };
  return { list, stop: () => (console.error = original) };
}

/** What a component rendered, one entry per render. */
class Renders<T> {
  readonly seen: T[] = [];
  get count(): number {
    return this.seen.length;
  }
  get last(): T {
    return this.seen[this.seen.length - 1];
  }
}

function render(root: Root, node: ReactNode): void {
  flushSync(() => root.render(node));
}

test("useQuery: one render per batch of writes, none for unrelated writes, same array until a change", async () => {
  await withRoot(async (root, [peer]) => {
    const renders = new Renders<readonly string[]>();
    const arrays: unknown[] = [];
    let bump: () => void = () => {};
    function OpenTasks() {
      const [, setTick] = useState(0);
      bump = () => setTick((n) => n + 1);
      const tasks = useQuery(peer.repo, { schema: Task, where: { done: false }, sortBy: "title" });
      arrays.push(tasks);
      renders.seen.push(tasks.map((task) => task.get("title")));
      return null;
    }
    render(root, createElement(OpenTasks));
    assert.equal(renders.count, 1);
    assert.deepEqual(renders.last, []);

    for (let i = 0; i < 10; i++) {
      peer.repo.create(Task, { title: `t${i}`, done: false }, { key: `t${i}` });
    }
    await settle();
    assert.equal(
      renders.count,
      2,
      `ten creates in one tick: one render; ${JSON.stringify(renders.seen)}`,
    );
    assert.deepEqual(renders.last, ["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"]);

    peer.repo.create(Note, { text: "not a task" });
    peer.repo.create(Task, { title: "already done", done: true });
    await settle();
    assert.equal(renders.count, 2, "writes the query does not match: no render");

    flushSync(() => bump()); // a render for another reason
    assert.equal(renders.count, 3);
    assert.equal(arrays[2], arrays[1], "no change: the same results array");

    peer.repo.get("t3", Task)!.set("done", true);
    peer.repo.get("t4", Task)!.set("title", "t4 renamed");
    await settle();
    assert.equal(renders.count, 4, "two updates in one tick: one render");
    assert.deepEqual(renders.last, ["t0", "t1", "t2", "t4 renamed", "t5", "t6", "t7", "t8", "t9"]);
    assert.notEqual(arrays[3], arrays[2]);
  });
});

test("useQuery: two components reading one query hold the same array after every change (no tearing)", async () => {
  await withRoot(async (root, [peer]) => {
    const held: unknown[] = [];
    const counts = [0, 0];
    function Reader(props: { slot: number }) {
      const tasks = useQuery(peer.repo, { schema: Task, sortBy: "title" });
      held[props.slot] = tasks;
      counts[props.slot]++;
      return createElement("span", null, tasks.length);
    }
    render(
      root,
      createElement(
        "div",
        null,
        createElement(Reader, { slot: 0 }),
        createElement(Reader, { slot: 1 }),
      ),
    );
    const query = peer.repo.query({ schema: Task, sortBy: "title" });
    for (let round = 1; round <= 5; round++) {
      peer.repo.create(Task, { title: `r${round}` });
      await settle();
      assert.equal(held[0], held[1], `round ${round}: both readers hold one array`);
      assert.equal(held[0], query.results, `round ${round}: the query's current array`);
      assert.equal(query.results.length, round);
    }
    assert.deepEqual(counts, [6, 6], "each reader: the first render and one per change");
  });
});

test("useItem: follows local writes with one render per batch, ignores other items, undefined once deleted", async () => {
  await withRoot(async (root, [peer]) => {
    const renders = new Renders<unknown>();
    function Title() {
      const task = useItem(peer.repo, "a", Task);
      renders.seen.push(task);
      return createElement("p", null, task?.title ?? "none");
    }
    render(root, createElement(Title));
    assert.equal(renders.count, 1);
    assert.equal(renders.last, undefined, "a key with no item yet");

    const item = peer.repo.create(Task, { title: "first" }, { key: "a" });
    await settle();
    assert.equal(renders.count, 2);
    assert.deepEqual(renders.last, { title: "first" });

    item.set("title", "second");
    item.set("done", true);
    item.set("title", "third");
    await settle();
    assert.equal(renders.count, 3, "three writes in one tick: one render");
    assert.deepEqual(renders.last, { title: "third", done: true });
    const values = renders.last;

    peer.repo.create(Task, { title: "another" }, { key: "b" });
    peer.repo.get("b", Task)!.set("done", true);
    await settle();
    assert.equal(renders.count, 3, "writes to another item: no render");
    assert.equal(peer.repo.get("a", Task)!.toObject(), values, "the values object is kept");

    item.delete();
    await settle();
    assert.equal(renders.count, 4);
    assert.equal(renders.last, undefined);
  });
});

test("useItem on an item that exists when it mounts: follows its writes, not its neighbours'", async () => {
  await withRoot(async (root, [peer]) => {
    const item = peer.repo.create(Task, { title: "there before" }, { key: "early" });
    const renders = new Renders<unknown>();
    function Title() {
      const task = useItem(peer.repo, "early", Task);
      renders.seen.push(task);
      return null;
    }
    render(root, createElement(Title));
    assert.deepEqual(renders.last, { title: "there before" });
    peer.repo.create(Task, { title: "a neighbour" }, { key: "neighbour" });
    await settle();
    assert.equal(renders.count, 1, "a neighbour's write: no render");
    item.update({ title: "changed", done: false });
    await settle();
    assert.equal(renders.count, 2);
    assert.deepEqual(renders.last, { title: "changed", done: false });
    item.delete();
    await settle();
    assert.equal(renders.count, 3);
    assert.equal(renders.last, undefined);
  });
});

test("useItem and useQuery follow changes imported as blocks from another database", async () => {
  await withRoot(async (root, [here, there]) => {
    const item = new Renders<unknown>();
    const list = new Renders<readonly string[]>();
    function View() {
      const task = useItem(here.repo, "shared", Task);
      item.seen.push(task);
      return null;
    }
    function List() {
      const tasks = useQuery(here.repo, { schema: Task, sortBy: "title" });
      list.seen.push(tasks.map((task) => task.get("title")));
      return null;
    }
    render(root, createElement("div", null, createElement(View), createElement(List)));
    assert.equal(item.count, 1);
    assert.equal(list.count, 1);

    there.repo.create(Task, { title: "from afar" }, { key: "shared" });
    there.repo.create(Task, { title: "also from afar" });
    await there.repo.flush();
    await exchange(there, here);
    await settle();
    assert.deepEqual(item.last, { title: "from afar" });
    assert.deepEqual(list.last, ["also from afar", "from afar"]);
    assert.equal(item.count, 2, "one import: one render of the item");
    assert.equal(list.count, 2, "one import: one render of the list");

    there.repo.get("shared", Task)!.update({ title: "edited afar", done: true });
    await there.repo.flush();
    await exchange(there, here);
    await settle();
    assert.deepEqual(item.last, { title: "edited afar", done: true });
    assert.deepEqual(list.last, ["also from afar", "edited afar"]);
    assert.equal(item.count, 3);
    assert.equal(list.count, 3);
  }, 2);
});

test("useRepository: undefined while opening, then the provider's repository; useDatabase reads the provider", async () => {
  await withRoot(async (root, [peer]) => {
    const databases: Cairn[] = [];
    const repos: (RepositoryHandle | undefined)[] = [];
    const titles: (readonly string[])[] = [];
    function Page() {
      databases.push(useDatabase());
      const repo = useRepository("/data/react-page");
      repos.push(repo);
      titles.push(useQuery(repo, { schema: Task }).map((task) => task.get("title")));
      return null;
    }
    const pageRepo = await peer.db.open("/data/react-page");
    pageRepo.create(Task, { title: "on the page" });
    render(root, createElement(CairnProvider, { database: peer.db }, createElement(Page)));
    assert.equal(repos[0], undefined, "opening is asynchronous");
    assert.deepEqual(titles[0], []);
    await settle();
    assert.equal(repos[repos.length - 1], pageRepo, "the database's one handle for the path");
    assert.deepEqual(titles[titles.length - 1], ["on the page"]);
    assert.ok(databases.every((db) => db === peer.db));
  });
});

test("useRepository: a repository closed and opened again is the new handle for a page mounted later", async () => {
  await withRoot(async (root, [peer]) => {
    const shown: string[] = [];
    function Page() {
      const repo = useRepository("/data/react-reopened");
      const tasks = useQuery(repo, { schema: Task });
      shown.push(repo === undefined ? "opening" : `${tasks.length} tasks`);
      return null;
    }
    const page = createElement(CairnProvider, { database: peer.db }, createElement(Page));
    render(root, page);
    await settle();
    assert.equal(shown[shown.length - 1], "0 tasks");
    render(root, null); // the app unmounts the page, closes the repository, opens it again
    await peer.db.close("/data/react-reopened");
    const reopened = await peer.db.open("/data/react-reopened");
    reopened.create(Task, { title: "after the reopen" });
    render(root, page); // threw E_CLOSED: the closed handle was kept
    await settle();
    assert.equal(shown[shown.length - 1], "1 tasks");
  });
});

test("useQuery: a pooled query closed by another holder is made again, and the component follows on", async () => {
  await withRoot(async (root, [peer]) => {
    const options = { schema: Task, where: { done: false } } as const;
    const renders = new Renders<number>();
    function Open() {
      renders.seen.push(useQuery(peer.repo, options).length);
      return null;
    }
    render(root, createElement(Open));
    peer.repo.create(Task, { title: "a", done: false });
    await settle();
    assert.equal(renders.last, 1);
    // Elsewhere in the app: the same query, read once and closed (closing it for every holder).
    const once = peer.repo.query(options);
    assert.equal(once.results.length, 1);
    once.close();
    await settle();
    peer.repo.create(Task, { title: "b", done: false });
    peer.repo.create(Task, { title: "c", done: false });
    await settle();
    assert.equal(renders.last, 3, "the component stopped following its query");
  });
});

test("useQuery: the queries of options a component no longer passes close, the shown one stays (strict mode), and unmounting closes it unless the app kept it", async () => {
  await withRoot(async (root, [peer]) => {
    const afterGrace = () => new Promise((resolve) => setTimeout(resolve, 1_100));
    const optionsFor = (prefix: string) => ({ schema: Task, where: { title: { prefix } } });
    const queryOf = (prefix: string) => peer.repo.query(optionsFor(prefix), { whileHeld: true });
    for (const title of ["a", "ab", "abc", "b"]) peer.repo.create(Task, { title, done: false });
    const renders = new Renders<number>();
    let type: (prefix: string) => void = () => {};
    function Search() {
      const [prefix, setPrefix] = useState("a");
      type = setPrefix;
      renders.seen.push(useQuery(peer.repo, optionsFor(prefix)).length);
      return null;
    }
    render(root, createElement(StrictMode, null, createElement(Search)));
    const typed = ["a", "ab", "abc"].map((prefix) => {
      flushSync(() => type(prefix));
      return queryOf(prefix);
    });
    assert.equal(renders.last, 1);
    await afterGrace();
    assert.deepEqual(typed.map((query) => query.closed), [true, true, false]);
    peer.repo.create(Task, { title: "abcd", done: false });
    await settle();
    assert.equal(renders.last, 2, "the shown query follows writes after the grace");

    const kept = peer.repo.query(optionsFor("abc"));
    flushSync(() => root.render(null));
    await afterGrace();
    assert.equal(kept.closed, false, "the app's own repo.query call keeps it");
    kept.close();
    render(root, createElement(Search));
    const shown = queryOf("a");
    flushSync(() => root.render(null));
    await afterGrace();
    assert.equal(shown.closed, true, "unmounted: nothing holds it");
  });
});

test("useItem: one item read through two versions renders once per change (the snapshots stay stable)", async () => {
  const NoteV2 = defineSchema({
    ns: "react-note",
    version: 2,
    fields: { text: { type: "string", required: true }, pinned: { type: "boolean" } },
    upgrade: (old) => ({ ...old, pinned: false }),
  });
  await withRoot(async (root, [peer]) => {
    peer.db.register(NoteV2);
    peer.repo.create(Note, { text: "hello" }, { key: "n" });
    const renders = new Renders<string>();
    function Both() {
      const asV1 = useItem(peer.repo, "n", Note);
      const newest = useItem(peer.repo, "n");
      renders.seen.push(`${asV1?.text}/${String(newest?.pinned)}`);
      return null;
    }
    render(root, createElement(Both));
    assert.deepEqual(renders.seen, ["hello/false"]);
    peer.repo.get("n", Note)!.set("text", "changed");
    await settle();
    assert.deepEqual(renders.seen, ["hello/false", "changed/false"]);
  });
});

test("useItem: an item written under a schema this app lacks shows once db.register adds it, and a newer version registered later reads through it", async () => {
  const NoteV2 = defineSchema({
    ns: "react-note",
    version: 2,
    fields: { text: { type: "string", required: true }, pinned: { type: "boolean" } },
    upgrade: (old) => ({ ...old, pinned: false }),
  });
  const NoteV3 = defineSchema({
    ns: "react-note",
    version: 3,
    fields: { text: { type: "string", required: true }, pinned: { type: "boolean" } },
    upgrade: (old) => ({ ...old, text: String(old.text).toUpperCase() }),
  });
  await withRoot(async (root, [reader, writer]) => {
    writer.db.register(NoteV2);
    writer.repo.create(NoteV2, { text: "from a newer app", pinned: true }, { key: "n" });
    await exchange(writer, reader);
    const renders = new Renders<string>();
    function Shown() {
      const note = useItem(reader.repo, "n");
      renders.seen.push(note ? `${note.text}/${String(note.pinned)}` : "none");
      return null;
    }
    render(root, createElement(Shown));
    assert.deepEqual(renders.seen, ["none"], "written under a version this app lacks");
    reader.db.register(NoteV2);
    await settle();
    assert.deepEqual(renders.seen, ["none", "from a newer app/true"]);
    reader.db.register(NoteV3);
    await settle();
    assert.deepEqual(renders.seen, ["none", "from a newer app/true", "FROM A NEWER APP/true"]);
  }, 2);
});

test("useQuery: a where function without an id is refused (each render would leak a query)", async () => {
  await withRoot((root, [peer]) => {
    const errors: unknown[] = [];
    function Bad() {
      try {
        useQuery(peer.repo, { where: () => true });
      } catch (err) {
        errors.push(err);
      }
      return null;
    }
    function Good() {
      const tasks = useQuery(peer.repo, { where: () => true, id: "every-item" });
      return createElement("span", null, tasks.length);
    }
    render(root, createElement("div", null, createElement(Bad), createElement(Good)));
    assert.equal(errors.length, 1);
    assert.ok(isCairnError(errors[0], "E_BAD_ARGUMENT"), String(errors[0]));
  });
});

/** An error boundary that records what it catches; `reset()` renders its children again. */
class Boundary extends Component<{ caught: unknown[]; children?: ReactNode }, { failed: boolean }> {
  static reset = () => {};
  override state = { failed: false };
  static getDerivedStateFromError() {
    return { failed: true };
  }
  override componentDidCatch(error: unknown) {
    this.props.caught.push(error);
    Boundary.reset = () => this.setState({ failed: false });
  }
  override render() {
    return this.state.failed ? null : this.props.children;
  }
}

/**
 * Renders `Page` under a provider of `db` and a Boundary, on a root whose boundaries' catches are
 * the test's to check (React would log each); unmounts it and closes `db` after `fn`.
 */
async function underBoundary(
  db: Cairn,
  Page: () => ReactNode,
  fn: (caught: unknown[]) => Promise<void>,
): Promise<void> {
  const root = createRoot(document.createElement("div"), { onCaughtError: () => {} });
  const caught: unknown[] = [];
  try {
    const page = createElement(Boundary, { caught }, createElement(Page));
    render(root, createElement(CairnProvider, { database: db }, page));
    await fn(caught);
  } finally {
    flushSync(() => root.unmount());
    await db.close();
  }
}

test("useRepository: a failed open reaches the error boundary, also when the component renders again, and the boundary's reset opens the path again", async () => {
  let rerender = () => {};
  let path = "no-leading-slash";
  function Page() {
    const [count, setCount] = useState(0);
    rerender = () => setCount(count + 1);
    return createElement("p", null, useRepository(path)?.path ?? "opening");
  }
  await underBoundary(await Cairn.open({ schemas: [Task] }), Page, async (caught) => {
    // Rendered again by its own state while the open fails: the failure still reaches the
    // boundary (it stayed "opening" for good, the failure seen by no render).
    rerender();
    await settle();
    assert.equal(caught.length, 1);
    assert.ok(isCairnError(caught[0], "E_BAD_PATH"), String(caught[0]));
    path = "/data/after-reset";
    flushSync(() => Boundary.reset());
    await settle();
    assert.equal(caught.length, 1, "the next open works");
  });
});

test("db.close(path) under a page holding the repository: no E_CLOSED, and the page and useItem follow the path opened again", async () => {
  const db = await Cairn.open({ schemas: [Task] });
  const tasks = await db.open("/data/react-closing");
  tasks.create(Task, { title: "before the close" }, { key: "first" });
  const handles: (RepositoryHandle | undefined)[] = [];
  const titles: (string | undefined)[] = [];
  function List(props: { repo: RepositoryHandle }) {
    const shown = useQuery(props.repo, { schema: Task, sortBy: "title" });
    titles.push(useItem(props.repo, "first", Task)?.title);
    return createElement("ul", null, shown.length);
  }
  function Page() {
    const repo = useRepository("/data/react-closing");
    handles.push(repo);
    return repo ? createElement(List, { repo }) : null;
  }
  await underBoundary(db, Page, async (caught) => {
    await settle();
    assert.equal(handles.at(-1), tasks);
    await db.close("/data/react-closing");
    await settle();
    assert.deepEqual(caught, [], "nothing thrown to the boundary (E_CLOSED before)");
    const again = handles.at(-1);
    assert.ok(again !== undefined && again !== tasks && !again.closed, "the path opened again");
    again.get("first", Task)!.set("title", "after the reopen");
    await settle();
    assert.equal(titles.at(-1), "after the reopen");
  });
});

test("CairnProvider: a repository it was handed, closed and opened again since, is not handed back by a later render", async () => {
  await withRoot(async (root, [peer]) => {
    const first = await peer.db.open("/data/react-handed");
    const handles: (RepositoryHandle | undefined)[] = [];
    function Page() {
      handles.push(useRepository("/data/react-handed"));
      return null;
    }
    const app = () =>
      createElement(
        CairnProvider,
        { database: peer.db, repositories: [first] },
        createElement(Page),
      );
    render(root, app());
    assert.equal(handles.at(-1), first);
    await peer.db.close("/data/react-handed");
    await settle();
    const second = handles.at(-1);
    assert.ok(second !== undefined && second !== first, "the path opened again");
    render(root, app()); // the provider renders again, its props naming the closed handle
    await settle();
    assert.equal(handles.at(-1), second, "undefined again (the subtree remounted) before");
  });
});

test("useQuery: a where function that throws for an item is thrown to the error boundary", async () => {
  const db = await Cairn.open({ schemas: [Task] });
  const tasks = await db.open("/data/react-throwing");
  function Titles() {
    const shown = useQuery(tasks, {
      schema: Task,
      where: (task) => {
        if (task.get("title") === "bad") throw new Error("cannot judge it");
        return true;
      },
      id: "judged",
    });
    return createElement("p", null, shown.length);
  }
  await underBoundary(db, Titles, async (caught) => {
    tasks.create(Task, { title: "fine" });
    await settle();
    assert.deepEqual(caught, []);
    tasks.create(Task, { title: "bad" });
    await settle();
    assert.equal(caught.length, 1, "only reported as uncaught before");
    assert.ok(isCairnError(caught[0], "E_QUERY_FAILED"), String(caught[0]));
  });
});

test("db.close() under a mounted provider: its repositories show as undefined, nothing is thrown to the boundary, and another database takes over", async () => {
  const first = await Cairn.open({ schemas: [Task] });
  (await first.open("/data/react-logout")).create(Task, { title: "first's" });
  const second = await Cairn.open({ schemas: [Task] });
  (await second.open("/data/react-logout")).create(Task, { title: "second's" });
  const shown: (string | undefined)[] = [];
  function Titles(props: { repo: RepositoryHandle }) {
    const tasks = useQuery(props.repo, { schema: Task });
    return createElement("p", null, tasks.map((task) => task.get("title")).join());
  }
  function Page() {
    const repo = useRepository("/data/react-logout");
    shown.push(repo ? "open" : undefined);
    return repo ? createElement(Titles, { repo }) : null;
  }
  const root = createRoot(document.createElement("div"), { onCaughtError: () => {} });
  const caught: unknown[] = [];
  const app = (db: Cairn) =>
    createElement(
      CairnProvider,
      { database: db },
      createElement(Boundary, { caught }, createElement(Page)),
    );
  try {
    render(root, app(first));
    await settle();
    assert.equal(shown.at(-1), "open");
    // "Log out": close the database, then hand the provider another one.
    await first.close();
    await settle();
    assert.deepEqual(caught, [], "E_CLOSED thrown to the boundary before");
    assert.equal(shown.at(-1), undefined);
    render(root, app(second));
    await settle();
    assert.equal(shown.at(-1), "open");
    assert.deepEqual(caught, []);
  } finally {
    flushSync(() => root.unmount());
    await second.close();
  }
});

test("db.close() that fails (a full disk) leaves the database open: a path whose repository did close is opened again", async () => {
  const plan = new FailingCalls();
  const db = await openCairnOn(
    { path: `cairn-test/react-${crypto.randomUUID()}`, schemas: [Task] },
    async (directory) => faultyBackend(await openOpfsBackend(directory), plan),
  );
  await db.open("/data/fine");
  const full = await db.open("/data/full");
  const shown: (string | undefined)[] = [];
  function Page() {
    const repo = useRepository("/data/fine");
    shown.push(repo ? "open" : undefined);
    return null;
  }
  await underBoundary(db, Page, async (caught) => {
    await settle();
    assert.equal(shown.at(-1), "open");
    plan.diskFull();
    full.create(Task, { title: "waits for room" });
    // /data/fine closes (nothing to write), /data/full cannot: the database stays open.
    await assert.rejects(db.close(), (err) => isCairnError(err, "E_IO"));
    plan.clear();
    assert.equal(db.closed, false);
    await new Promise((resolve) => setTimeout(resolve, 600));
    await settle();
    assert.deepEqual(caught, []);
    assert.equal(shown.at(-1), "open", "undefined for good before: the refused open was kept");
  });
});

test("useQuery of a query made whileHeld by the caller: the hook holds it, so it follows writes past the grace second", async () => {
  await withRoot(async (root, [peer]) => {
    const counts: number[] = [];
    function Count() {
      const query = useMemo(() => peer.repo.query({ schema: Task }, { whileHeld: true }), []);
      counts.push(useQuery(query).length);
      return null;
    }
    render(root, createElement(Count));
    await settle();
    // Past the second a query made whileHeld stays open unheld (RELEASE_GRACE_MS): it closed
    // before, and the page kept showing 0.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    peer.repo.create(Task, { title: "later" });
    await settle();
    assert.equal(counts.at(-1), 1);
  });
});

test("useQuery of the caller's query whose repository closes: shows nothing, no E_CLOSED thrown", async () => {
  const db = await Cairn.open({ schemas: [Task] });
  const repo = await db.open("/data/react-query-closed");
  repo.create(Task, { title: "shown" });
  const query = repo.query({ schema: Task });
  const counts: number[] = [];
  function Count() {
    const [, setTick] = useState(0);
    rerender = () => setTick((tick) => tick + 1);
    counts.push(useQuery(query).length);
    return null;
  }
  let rerender = () => {};
  await underBoundary(db, Count, async (caught) => {
    await settle();
    assert.equal(counts.at(-1), 1);
    await db.close("/data/react-query-closed");
    await settle();
    assert.equal(counts.at(-1), 0, "the old results stayed shown before");
    rerender();
    await settle();
    assert.deepEqual(caught, [], "E_CLOSED at the next render before");
  });
});

test("useSyncStatus: renders each new status of the link", async () => {
  await withRoot(async (root) => {
    const link = new FakeLink();
    const statuses: (SyncStatus | undefined)[] = [];
    function Status(props: { link: SyncLink | undefined }) {
      statuses.push(useSyncStatus(props.link));
      return null;
    }
    render(root, createElement(Status, { link: undefined }));
    render(root, createElement(Status, { link }));
    link.become("catching-up");
    await settle();
    link.become("synced");
    await settle();
    assert.deepEqual(statuses, [undefined, "connecting", "catching-up", "synced"]);
    assert.equal(link.listeners.size, 1);
    flushSync(() => root.unmount());
    assert.equal(link.listeners.size, 0, "unmounting unsubscribes");
  });
});

/** The part of a SyncLink the hook uses, driven by the test (a real link needs a server). */
class FakeLink implements SyncLink {
  status: SyncStatus = "connecting";
  readonly unacknowledged = 0;
  readonly lastError = undefined;
  readonly listeners = new Set<(status: SyncStatus) => void>();

  on(event: "status" | "error", listener: (value: never) => void): () => void {
    if (event !== "status") return () => {};
    const typed = listener as (status: SyncStatus) => void;
    this.listeners.add(typed);
    return () => this.listeners.delete(typed);
  }

  become(status: SyncStatus): void {
    this.status = status;
    for (const listener of this.listeners) listener(status);
  }

  synced(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
