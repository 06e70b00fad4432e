/**
 * A todo app on Cairn and React: lists of todos with tags, a done mark and a note whose
 * concurrent edits merge character by character. It keeps its data in OPFS, shares it with the
 * app's other tabs, and syncs it through the sync server named by the page
 * (`<meta name="cairn-sync">`) with the same app in other browsers. Started by `deno task todo`
 * (examples/todo-web/serve.ts), which bundles this file with esbuild.
 */
import { StrictMode, useState } from "react";
import { createRoot } from "react-dom/client";
import { Cairn, defineSchema, type RepositoryHandle, sync, type SyncLink } from "cairndb";
import { CairnProvider, useItem, useQuery, useRepository, useSyncStatus } from "cairndb/react";

const List = defineSchema({
  ns: "todo-list",
  version: 1,
  fields: { name: { type: "string", required: true } },
});

const Todo = defineSchema({
  ns: "todo",
  version: 1,
  fields: {
    list: { type: "string", required: true },
    title: { type: "string", required: true },
    done: { type: "boolean" },
    tags: { type: "set" },
    note: { type: "text" },
  },
});

const REPOSITORY = "/todos";

function SyncBadge({ link }: { link: SyncLink }) {
  const status = useSyncStatus(link);
  return <span data-testid="sync-status" className={`badge ${status}`}>{status}</span>;
}

/** A text box that calls `submit` with its trimmed value on Enter, then empties itself. */
function Entry(props: { placeholder: string; testId: string; submit(value: string): void }) {
  const [value, setValue] = useState("");
  return (
    <input
      data-testid={props.testId}
      placeholder={props.placeholder}
      value={value}
      onChange={(event) => setValue(event.target.value)}
      onKeyDown={(event) => {
        if (event.key !== "Enter" || value.trim() === "") return;
        props.submit(value.trim());
        setValue("");
      }}
    />
  );
}

function TodoRow({ repo, todoKey }: { repo: RepositoryHandle; todoKey: string }) {
  const todo = useItem(repo, todoKey, Todo);
  if (!todo) return null;
  const item = () => repo.get(todoKey, Todo)!;
  return (
    <li data-testid="todo" data-title={todo.title}>
      <label>
        <input
          type="checkbox"
          checked={todo.done === true}
          onChange={() => item().set("done", !todo.done)}
        />
        <span className={todo.done ? "done" : ""}>{todo.title}</span>
      </label>
      <input
        data-testid="tags"
        className="tags"
        placeholder="tags, comma separated"
        value={[...(todo.tags ?? [])].sort().join(", ")}
        onChange={(event) => {
          const tags = event.target.value.split(",").map((tag) => tag.trim()).filter(Boolean);
          item().set("tags", new Set(tags));
        }}
      />
      <textarea
        data-testid="note"
        placeholder="note"
        value={todo.note ?? ""}
        // Setting the whole text is stored as the edit that turns the old text into the new.
        onChange={(event) => item().set("note", event.target.value)}
      />
      <button type="button" onClick={() => item().delete()}>delete</button>
    </li>
  );
}

function ListView({ repo, listKey }: { repo: RepositoryHandle; listKey: string }) {
  const todos = useQuery(repo, { schema: Todo, where: { list: listKey }, sortBy: "title" });
  return (
    <section>
      <Entry
        testId="new-todo"
        placeholder="What needs doing?"
        submit={(title) => repo.create(Todo, { list: listKey, title, done: false })}
      />
      <ul>{todos.map((todo) => <TodoRow key={todo.key} repo={repo} todoKey={todo.key} />)}</ul>
    </section>
  );
}

function App({ link }: { link: SyncLink }) {
  const repo = useRepository(REPOSITORY);
  const lists = useQuery(repo, { schema: List, sortBy: "name" });
  const [chosen, choose] = useState<string | undefined>(undefined);
  if (repo === undefined) return <p>opening…</p>;
  const current = lists.find((list) => list.key === chosen) ?? lists[0];
  return (
    <main>
      <header>
        <h1>Todos</h1>
        <SyncBadge link={link} />
      </header>
      <nav>
        {lists.map((list) => (
          <button
            type="button"
            key={list.key}
            data-testid="list"
            className={list.key === current?.key ? "current" : ""}
            onClick={() => choose(list.key)}
          >
            {list.get("name")}
          </button>
        ))}
        <Entry
          testId="new-list"
          placeholder="New list"
          submit={(name) => choose(repo.create(List, { name }).key)}
        />
      </nav>
      {current ? <ListView repo={repo} listKey={current.key} /> : <p>Make a list to begin.</p>}
    </main>
  );
}

const syncUrl = document.querySelector<HTMLMetaElement>('meta[name="cairn-sync"]')!.content;
const database = await Cairn.open({ path: "todo-web", schemas: [List, Todo] });
const link = sync(database, syncUrl, { backoff: { initialMs: 100, maxMs: 2_000 } });
createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <CairnProvider database={database}>
      <App link={link} />
    </CairnProvider>
  </StrictMode>,
);
