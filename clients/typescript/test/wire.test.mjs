// The wire shapes ckpt sends (testdata/wire, written by the Go test
// TestWireShapesMatchTheGoldens in cmd/ckpt/protocol) against the client's
// types: each golden is type-checked as an object literal of the type the
// client gives that result, so a field the server sends that the type lacks
// (an excess property) or a field the type requires that the server does
// not send fails here, and the two cannot drift.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const wire = join(here, "..", "..", "..", "testdata", "wire");
const src = join(here, "..", "src");
const tsc = join(here, "..", "node_modules", "typescript", "bin", "tsc");

/** The client's type of each golden (testdata/wire/NAME.json). */
const types = {
  save: "T.SaveResult",
  "save-second": "T.SaveResult",
  list: "T.ListResult",
  show: "T.ShowResult",
  ls: "T.LsResult",
  "ls-lossless": "T.LsResult",
  cat: "T.CatResult",
  "cat-binary": "T.CatResult",
  diff: "T.DiffResult",
  "diff-lossless": "T.DiffResult",
  tasks: "T.TasksResult",
  "restore-dry-run": "T.RestoreResult",
  restore: "T.RestoreResult",
  "restore-lossless": "T.RestoreResult",
  verify: "T.VerifyResult",
  stats: "T.StatsResult",
  "save-third": "T.SaveResult",
  log: "T.LogResult",
  export: "T.ExportResult",
  bisect: "T.BisectResult",
  "error-unknown-ref": "{ error: E.RpcErrorObject & { data: E.CkptErrorData } }",
  events: "{ [K in keyof T.CkptEvents]: { method: K; params: T.CkptEvents[K] } }[keyof T.CkptEvents][]",
};

function golden(name) {
  return JSON.parse(readFileSync(join(wire, `${name}.json`), "utf8"));
}

test("every golden has a type and every type a golden", () => {
  const goldens = readdirSync(wire).filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -5)).sort();
  assert.deepEqual(goldens, Object.keys(types).sort());
});

test("the wire goldens type-check as the client's result types", () => {
  const dir = mkdtempSync(join(tmpdir(), "ckpt-wire-"));
  try {
    const lines = [
      `import type * as T from ${JSON.stringify(join(src, "types.js"))};`,
      `import type * as E from ${JSON.stringify(join(src, "errors.js"))};`,
    ];
    for (const [name, type] of Object.entries(types)) {
      const id = `golden_${name.replace(/-/g, "_")}`; // not a keyword (export)
      lines.push(`export const ${id}: ${type} = ${JSON.stringify(golden(name), null, 2)};`);
    }
    writeFileSync(join(dir, "wire.ts"), lines.join("\n") + "\n");
    const config = JSON.parse(readFileSync(join(here, "..", "tsconfig.json"), "utf8"));
    config.compilerOptions = { ...config.compilerOptions, rootDir: "/", noEmit: true, declaration: false, sourceMap: false,
      typeRoots: [join(here, "..", "node_modules", "@types")] };
    config.include = [join(dir, "wire.ts")];
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config));
    try {
      execFileSync(process.execPath, [tsc, "-p", join(dir, "tsconfig.json")], { encoding: "utf8" });
    } catch (err) {
      assert.fail(`the wire goldens do not match the client's types:\n${err.stdout}${err.stderr}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
