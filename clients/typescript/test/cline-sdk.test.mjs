// The checkpoint functions for Cline's SDK against a freshly built ckpt, in
// a folder that is not a git repository (where the SDK's own checkpoints
// do nothing).
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clineSdk } from "../dist/index.js";
import { buildCkpt } from "./ckpt-binary.mjs";

let binary;

before(() => {
  binary = buildCkpt();
});

test("a turn's checkpoint, its workspace diff, and an apply that rewinds every kind of change", async (t) => {
  const ws = mkdtempSync(join(tmpdir(), "ckpt-sdk-ws-"));
  const store = mkdtempSync(join(tmpdir(), "ckpt-sdk-store-"));
  t.after(() => {
    rmSync(ws, { recursive: true, force: true });
    rmSync(store, { recursive: true, force: true });
  });
  writeFileSync(join(ws, "tracked.txt"), "before\n");
  writeFileSync(join(ws, "doomed.txt"), "deleted later\n");
  const sdk = clineSdk.sdkCheckpoints({ binary, store, serverIdle: "3s" });

  const turn1 = await sdk.createCheckpoint({ cwd: ws, sessionId: "sess-1", runCount: 1 });
  assert.equal(turn1.runCount, 1);
  assert.equal(typeof turn1.createdAt, "number");
  assert.match(turn1.ref, /^ckpt:cline-sess-1:[0-9a-f]{64}$/);
  const turn2 = await sdk.createCheckpoint({ cwd: ws, sessionId: "sess-1", runCount: 2 });
  assert.notEqual(turn2.ref, turn1.ref, "every turn gets its own checkpoint, changed or not");

  writeFileSync(join(ws, "tracked.txt"), "after\n");
  writeFileSync(join(ws, "untracked.txt"), "new file\n");
  rmSync(join(ws, "doomed.txt"));
  const diff = await sdk.buildCheckpointWorkspaceDiff(ws, turn1);
  diff.sort((a, b) => a.filePath.localeCompare(b.filePath));
  assert.deepEqual(diff, [
    { filePath: join(ws, "doomed.txt"), leftContent: "deleted later\n", rightContent: "" },
    { filePath: join(ws, "tracked.txt"), leftContent: "before\n", rightContent: "after\n" },
    { filePath: join(ws, "untracked.txt"), leftContent: "", rightContent: "new file\n" },
  ]);

  await sdk.applyCheckpointToWorktree(ws, turn1);
  assert.equal(readFileSync(join(ws, "tracked.txt"), "utf8"), "before\n", "a changed file is rewound");
  assert.equal(readFileSync(join(ws, "doomed.txt"), "utf8"), "deleted later\n", "a deleted file is back");
  assert.equal(existsSync(join(ws, "untracked.txt")), false, "a file created after the checkpoint is gone");
  assert.deepEqual(await sdk.buildCheckpointWorkspaceDiff(ws, turn1), []);
  assert.equal(existsSync(join(ws, ".git")), false, "nothing is written into the folder");

  await assert.rejects(sdk.applyCheckpointToWorktree(ws, { ref: "0123abc", createdAt: 0, runCount: 1 }), /not made by ckpt/);
});
