/**
 * `CairnProvider` hands one open database to the components below it; `useDatabase` reads it.
 * Repositories the app opened before rendering (on a server, for server-side rendering) can be
 * handed over too, so that `useRepository` returns them on the first render.
 */
import { createContext, createElement, type ReactElement, type ReactNode, useContext } from "react";
import { type Cairn, CairnError, type RepositoryHandle } from "cairndb";
import { rememberRepository } from "./repositories.ts";

export interface CairnProviderProps {
  /** The open database the components below use. */
  readonly database: Cairn;
  /** Repositories already open (`await database.open(path)`), available at the first render. */
  readonly repositories?: readonly RepositoryHandle[];
  readonly children?: ReactNode;
}

const DatabaseContext = createContext<Cairn | undefined>(undefined);

export function CairnProvider(props: CairnProviderProps): ReactElement {
  for (const repo of props.repositories ?? []) rememberRepository(props.database, repo);
  return createElement(DatabaseContext.Provider, { value: props.database }, props.children);
}

/** The database of the nearest `CairnProvider`; E_BAD_ARGUMENT outside one. */
export function useDatabase(): Cairn {
  const database = useContext(DatabaseContext);
  if (database === undefined) {
    throw new CairnError(
      "E_BAD_ARGUMENT",
      "useDatabase (and useRepository) must be called below a <CairnProvider database={db}>",
    );
  }
  return database;
}
