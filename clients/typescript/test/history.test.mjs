// log, export and bisect through the client, against a freshly built ckpt:
// a file's history, a checkpoint written elsewhere, and the first step at
// which a check fails, the workspace untouched by the last two.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CkptSharedClient, CkptUsageError } from "../dist/index.js";
import { buildCkpt } from "./ckpt-binary.mjs";

let binary;

before(() => {
  binary = buildCkpt();
});

function tempDir(t, prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** steps saves one checkpoint per element: the files it writes, and its message. */
async function saveSteps(client, ws, steps) {
  const ids = [];
  for (const [i, files] of steps.entries()) {
    for (const [name, content] of Object.entries(files)) writeFileSync(join(ws, name), content);
    ids.push((await client.save({ message: `step ${i + 1}`, allow_empty: true })).id);
  }
  return ids;
}

test("log, export and bisect answer with their wire shapes", async (t) => {
  const ws = tempDir(t, "ckpt-ws-");
  const store = tempDir(t, "ckpt-store-");
  const client = CkptSharedClient.connect({ workspace: ws, store, binary, task: "agent", serverIdle: "2s" });
  t.after(() => client.close());
  // status.txt breaks at step 7 of 10; a.txt changes at steps 1, 3 and 8.
  const steps = Array.from({ length: 10 }, (_, i) => ({ "status.txt": i + 1 >= 7 ? "broken\n" : `ok ${i}\n` }));
  steps[0]["a.txt"] = "one\n";
  steps[2]["a.txt"] = "three!\n";
  steps[7]["a.txt"] = "eight\n";
  const ids = await saveSteps(client, ws, steps);

  const log = await client.log({ paths: ["a.txt"] });
  assert.deepEqual(log.entries.map((e) => e.checkpoint.seq), [8, 3, 1], "the checkpoints that changed a.txt, newest first");
  assert.deepEqual(log.entries.map((e) => e.changes.map((c) => [c.path, c.status, c.size_before, c.size_after])),
    [[["a.txt", "modified", 7, 6]], [["a.txt", "modified", 4, 7]], [["a.txt", "added", -1, 4]]]);
  assert.equal(log.entries[1].checkpoint.id, ids[2]);
  assert.equal(log.checkpoints_compared, 10);
  assert.ok(log.trees_read > 0);

  const out = join(tempDir(t, "ckpt-export-"), "step3");
  const exported = await client.export({ ref: ids[2], dir: out });
  assert.equal(exported.checkpoint, ids[2]);
  assert.deepEqual(exported.written_paths.sort(), ["a.txt", "status.txt"]);
  assert.deepEqual(exported.conflicts, []);
  assert.equal(readFileSync(join(out, "a.txt"), "utf8"), "three!\n");
  assert.equal(readFileSync(join(ws, "a.txt"), "utf8"), "eight\n", "the workspace keeps its files");
  await assert.rejects(client.export({ ref: ids[0], dir: out }), CkptUsageError, "a directory that is not empty is refused");
  assert.deepEqual(readdirSync(out).sort(), ["a.txt", "status.txt"]);

  const check = `"${process.execPath}" -e "process.exit(require('fs').readFileSync('status.txt', 'utf8').startsWith('ok') ? 0 : 1)"`;
  const found = await client.bisect({ run: check });
  assert.equal(found.first_bad.id, ids[6]);
  assert.equal(found.first_bad.message, "step 7");
  assert.ok(found.steps.length >= 1 && found.steps.length <= Math.ceil(Math.log2(10)) + 2, `${found.steps.length} runs, the two default ends tested too`);
  for (const s of found.steps) assert.equal(s.verdict, s.seq >= 7 ? "bad" : "good", `step ${s.seq}`);
  assert.deepEqual(found.changes.map((c) => [c.path, c.status]), [["status.txt", "modified"]]);
  assert.equal(readFileSync(join(ws, "status.txt"), "utf8"), "broken\n", "bisect leaves the workspace alone");
  const head = (await client.list()).head;
  assert.equal(head, ids[9], "and the head");
});
