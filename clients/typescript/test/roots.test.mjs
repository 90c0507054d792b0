// A multi-root workspace through the client, against a freshly built ckpt:
// one checkpoint over several directories, each under its base name, for a
// client of the store's server and for a stdio serve child alike.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CkptClient, CkptSharedClient } from "../dist/index.js";
import { buildCkpt } from "./ckpt-binary.mjs";

let binary;

before(() => {
  binary = buildCkpt();
});

function roots(t) {
  const parent = mkdtempSync(join(tmpdir(), "ckpt-roots-"));
  t.after(() => rmSync(parent, { recursive: true, force: true }));
  const front = join(parent, "front");
  const back = join(parent, "back");
  mkdirSync(front);
  mkdirSync(back);
  writeFileSync(join(front, "app.ts"), "v1\n");
  writeFileSync(join(back, "main.go"), "v1\n");
  return { front, back, store: join(parent, "store") };
}

test("a shared client saves, diffs and restores every root of a multi-root workspace as one", async (t) => {
  const { front, back, store } = roots(t);
  const client = CkptSharedClient.connect({ workspace: [front, back], store, binary, serverIdle: "2s" });
  t.after(() => client.close());
  const attached = await client.attach();
  assert.deepEqual(attached.roots?.map((r) => [r.name, r.dir]).sort(), [["back", back], ["front", front]]);
  const first = await client.save({ message: "both roots" });
  const top = await client.ls({ ref: first.id });
  assert.deepEqual(top.entries.map((e) => e.path).sort(), ["back", "front"]);

  writeFileSync(join(back, "main.go"), "v2\n");
  writeFileSync(join(front, "app.ts"), "v2\n");
  const diff = await client.diff({ from: first.id, to: "workspace" });
  assert.deepEqual(diff.files.map((f) => f.path).sort(), ["back/main.go", "front/app.ts"]);
  await client.save({ message: "edits" });

  await client.restore({ ref: first.id, paths: ["back"] });
  assert.equal(readFileSync(join(back, "main.go"), "utf8"), "v1\n", "the back root is rewound");
  assert.equal(readFileSync(join(front, "app.ts"), "utf8"), "v2\n", "the front root is left as it is");
  await client.restore({ ref: first.id });
  assert.equal(readFileSync(join(front, "app.ts"), "utf8"), "v1\n");
});

test("a stdio serve child takes the roots as one -C each", async (t) => {
  const { front, back, store } = roots(t);
  const client = CkptClient.start({ workspace: [front, back], store, binary });
  t.after(() => client.close());
  const saved = await client.save({ message: "stdio" });
  const top = await client.ls({ ref: saved.id });
  assert.deepEqual(top.entries.map((e) => e.path).sort(), ["back", "front"]);
  const inFront = await client.ls({ ref: saved.id, path: "front" });
  assert.deepEqual(inFront.entries.map((e) => e.path), ["front/app.ts"]);
});
