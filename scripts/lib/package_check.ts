/**
 * Proves the npm package works as users get it: `npm pack`, install the tarball (with React, the
 * optional peer of "cairndb/react") into a scratch Node project, type-check a TypeScript file that
 * imports "cairndb", "cairndb/server" and "cairndb/react" (strict, nodenext) and run it on Node 24
 * (it starts and stops a sync server, and renders a component to a string).
 */
import { resolve } from "node:path";
import { runTee } from "./process.ts";

export interface PackageCheck {
  name: string;
  ok: boolean;
  detail: string;
}

const CONSUMER =
  `import { Cairn, CairnError, decodeCommit, encodeCommit, type Commit } from "cairndb";
import { createSyncServer, type SyncServer } from "cairndb/server";
import { CairnProvider, useQuery } from "cairndb/react";
import { createElement } from "react";
import { renderToString } from "react-dom/server";

const commit: Commit = {
  session: "scratch", seq: 1, key: "k", hlc: 1, parents: [], schema: "note@1",
  kind: "value", value: { text: "from a scratch project" },
};
const back: Commit = decodeCommit(encodeCommit(commit));
if (back.kind !== "value" || back.value.text !== "from a scratch project") throw new Error("round trip failed");
try {
  decodeCommit(new Uint8Array([0x92]));
  throw new Error("expected a CairnError");
} catch (err) {
  if (!(err instanceof CairnError) || err.code !== "E_CORRUPT_ENCODING") throw err;
}
const dir = new URL("./sync-data", import.meta.url).pathname;
const server: SyncServer = await createSyncServer({ dir, port: 0, open: true });
if (!/^ws:\\/\\/127\\.0\\.0\\.1:\\d+$/.test(server.url)) throw new Error("no server url");
await server.close();

// cairndb/react takes the app's Cairn and handles (its types are cairndb's own, not copies).
const db: Cairn = await Cairn.open();
const repo = await db.open("/notes");
function Count() {
  return createElement("b", null, useQuery(repo).length);
}
const html = renderToString(
  createElement(CairnProvider, { database: db, repositories: [repo] }, createElement(Count)),
);
if (html !== "<b>0</b>") throw new Error(\`rendered \${html}\`);
await db.close();
console.log("package ok");
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    module: "nodenext",
    moduleResolution: "nodenext",
    target: "es2022",
    noEmit: true,
    skipLibCheck: false,
    types: [],
  },
  include: ["index.ts"],
};

const REACT_PACKAGES = ["react", "react-dom", "@types/react", "@types/react-dom"];

function devDependency(name: string): string {
  const manifest = JSON.parse(Deno.readTextFileSync("package.json"));
  return manifest.devDependencies[name];
}

export async function checkPackage(): Promise<PackageCheck[]> {
  const root = Deno.cwd();
  const scratch = await Deno.makeTempDir({ prefix: "cairn-package-" });
  try {
    const packed = await runTee("npm", [
      "pack",
      "--silent",
      "--ignore-scripts",
      "--pack-destination",
      scratch,
    ]);
    if (packed.code !== 0) return [{ name: "npm pack", ok: false, detail: packed.output }];
    const tarball = resolve(scratch, packed.output.trim().split("\n").at(-1)!.trim());
    await Deno.writeTextFile(
      `${scratch}/package.json`,
      JSON.stringify({ name: "scratch", private: true, type: "module" }),
    );
    await Deno.writeTextFile(`${scratch}/tsconfig.json`, JSON.stringify(TSCONFIG));
    await Deno.writeTextFile(`${scratch}/index.ts`, CONSUMER);
    const installed = await runTee("npm", [
      "install",
      "--prefix",
      scratch,
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      tarball,
      // The optional peer of cairndb/react, in the versions this project develops against.
      ...REACT_PACKAGES.map((name) => `${name}@${devDependency(name)}`),
    ]);
    if (installed.code !== 0) {
      return [{ name: "npm install of the packed tarball", ok: false, detail: installed.output }];
    }

    const typecheck = await runTee(`${root}/node_modules/.bin/tsc`, [
      "-p",
      `${scratch}/tsconfig.json`,
    ]);
    const ran = await runTee(`${root}/node_modules/.bin/node`, [`${scratch}/index.ts`]);
    const declarations = await installedDeclarations(`${scratch}/node_modules/cairndb/dist`);
    return [
      {
        name: "the package ships one rolled-up .d.ts per entry point, without @internal members",
        ok: declarations.files.join() === "mod.d.ts,react.d.ts,server.d.ts" &&
          !declarations.internal,
        detail: `declaration files: ${declarations.files.join(", ")}; ` +
          `an internal member (LiveQuery.scanned) ${declarations.internal ? "is" : "is not"} there`,
      },
      {
        name: "a scratch TypeScript project type-checks against the package's .d.ts",
        ok: typecheck.code === 0,
        detail: typecheck.output,
      },
      {
        name:
          'the scratch project runs on Node 24 importing "cairndb", "cairndb/server", "cairndb/react"',
        ok: ran.code === 0 && ran.output.includes("package ok"),
        detail: ran.output,
      },
    ];
  } finally {
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
  }
}

/** The .d.ts files of the installed package, and whether an `@internal` member made it in. */
async function installedDeclarations(
  dist: string,
): Promise<{ files: string[]; internal: boolean }> {
  const files: string[] = [];
  const walk = async (dir: string, prefix: string) => {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isDirectory) await walk(`${dir}/${entry.name}`, `${prefix}${entry.name}/`);
      else if (entry.name.endsWith(".d.ts")) files.push(`${prefix}${entry.name}`);
    }
  };
  await walk(dist, "");
  const mod = await Deno.readTextFile(`${dist}/mod.d.ts`).catch(() => "");
  return { files: files.sort(), internal: /\bscanned\(/.test(mod) };
}
