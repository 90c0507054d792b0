// A full agent session through each adapter against the freshly built ckpt:
// ten edits with checkpoints, each step's diff checked byte for byte, a
// rewind, a redo, a nested repository, a binary file, an ignored build
// directory and a file that is not UTF-8.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { CheckpointTracker, RepoPerTaskCheckpointService } from "../dist/index.js";
import { buildCkpt } from "./ckpt-binary.mjs";

let binary;

before(() => {
  binary = buildCkpt();
});

/** tracked reads every file a checkpoint holds: all but build/ and nested/.git. */
function tracked(ws) {
  const out = new Map();
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      const rel = relative(ws, p).split("\\").join("/");
      if (rel === "build" || rel === "nested/.git") continue;
      if (e.isDirectory()) walk(p);
      else out.set(rel, readFileSync(p));
    }
  };
  walk(ws);
  return out;
}

/** edit i changes the workspace; every step also rewrites the ignored build output. */
function edit(ws, i) {
  writeFileSync(join(ws, "notes.md"), `# notes\n${"step\n".repeat(i)}`);
  writeFileSync(join(ws, "build/out.o"), Buffer.from([0, i, 0xff]));
  switch (i) {
    case 2: writeFileSync(join(ws, "logo.bin"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0xff, 0xfe, i])); break;
    case 4: writeFileSync(join(ws, "latin1.txt"), Buffer.from("caf\xe9 cr\xe8me\n", "latin1")); break;
    case 6: writeFileSync(join(ws, "nested/src.txt"), "nested edit\n"); break;
    case 8: rmSync(join(ws, "old.txt")); break;
    case 9: writeFileSync(join(ws, "latin1.txt"), Buffer.from("na\xefve\n", "latin1")); break;
  }
}

/** made holds the directories the tests make; they go once every test and its dispose has ended. */
const made = [];
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** tempDir makes a directory that goes when the file's tests end. */
function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** workspace makes the starting tree: a nested repository and an ignored build directory. */
function workspace() {
  const ws = tempDir("ckpt-ws-");
  mkdirSync(join(ws, "nested/.git"), { recursive: true });
  mkdirSync(join(ws, "build"));
  writeFileSync(join(ws, ".gitignore"), "build/\n");
  writeFileSync(join(ws, "nested/.git/HEAD"), "ref: refs/heads/main\n");
  writeFileSync(join(ws, "nested/src.txt"), "nested\n");
  writeFileSync(join(ws, "old.txt"), "to be deleted\n");
  writeFileSync(join(ws, "build/out.o"), "stale");
  return { ws, store: tempDir("ckpt-store-") };
}

/** expectedDiff is the byte-exact change set between two trees. */
function expectedDiff(a, b) {
  const out = new Map();
  for (const p of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(p) ?? Buffer.alloc(0);
    const y = b.get(p) ?? Buffer.alloc(0);
    if (!a.has(p) || !b.has(p) || !x.equals(y)) out.set(p, [x, y]);
  }
  return out;
}

function assertDiff(got, want, where) {
  assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort(), `${where}: changed paths`);
  for (const [p, [before, after]] of got) {
    assert.ok(before.equals(want.get(p)[0]), `${where}: ${p} before`);
    assert.ok(after.equals(want.get(p)[1]), `${where}: ${p} after`);
  }
}

function assertTree(ws, want, where) {
  const got = tracked(ws);
  assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort(), `${where}: files`);
  for (const [p, b] of want) assert.ok(got.get(p).equals(b), `${where}: ${p}`);
}

/**
 * session drives one adapter through the session: save(i) returns the
 * hash, diff(a, b) the byte-exact changes, restore(hash) rewinds.
 */
async function session(ws, { save, diff, restore }) {
  const trees = [tracked(ws)];
  const hashes = [await save(0)];
  for (let i = 1; i <= 10; i++) {
    edit(ws, i);
    trees.push(tracked(ws));
    hashes.push(await save(i));
    assertDiff(await diff(hashes[i - 1], hashes[i]), expectedDiff(trees[i - 1], trees[i]), `step ${i}`);
  }
  writeFileSync(join(ws, "notes.md"), "unsaved\n");
  assertDiff(await diff(hashes[10], undefined), expectedDiff(trees[10], tracked(ws)), "against the workspace");

  await restore(hashes[3]);
  assertTree(ws, trees[3], "rewind to step 3");
  assert.deepEqual(readFileSync(join(ws, "build/out.o")), Buffer.from([0, 10, 0xff]), "the ignored build output is untouched");
  assert.equal(readFileSync(join(ws, "nested/.git/HEAD"), "utf8"), "ref: refs/heads/main\n", "the nested .git is untouched");

  await restore(hashes[10]);
  assertTree(ws, trees[10], "redo to step 10");
  return hashes;
}

test("CheckpointTracker (Cline) through a full agent session", async (t) => {
  const { ws, store } = workspace();
  // The default profile: this session checks the bytes of a binary file and an image.
  const tracker = await CheckpointTracker.create("task-cline", { cwd: ws, store, binary, profile: "default", serverIdle: "5s" });
  t.after(() => tracker.dispose());
  const toMap = (set) => new Map(set.map((e) => [e.relativePath, [e.beforeBytes, e.afterBytes]]));
  const hashes = await session(ws, {
    save: () => tracker.commit(),
    diff: async (a, b) => {
      const set = await tracker.getDiffSet(a, b);
      for (const e of set) {
        assert.equal(e.absolutePath, join(ws, e.relativePath));
        assert.equal(e.after, e.afterBytes.toString("utf8"));
      }
      assert.equal(await tracker.getDiffCount(a, b), set.length);
      return toMap(set);
    },
    restore: (h) => tracker.resetHead(h),
  });
  assert.equal(new Set(hashes).size, 11, "every commit is a new checkpoint");
  assert.equal(await tracker.getDiffCount(hashes[10], hashes[10]), 0);
  assert.ok((await tracker.getDiffCount()) > 0, "from the first checkpoint to the workspace");
});

test("ShadowCheckpointService (Roo Code) through a full agent session, with its events", async (t) => {
  const { ws, store } = workspace();
  const svc = RepoPerTaskCheckpointService.create({ taskId: "task-roo", workspaceDir: ws, shadowDir: store, log: () => {},
    store, binary, profile: "default", serverIdle: "5s" });
  t.after(() => svc.dispose());
  const events = [];
  for (const name of ["initialize", "checkpoint", "restore", "error"]) svc.on(name, (e) => events.push(e));
  const init = await svc.initShadowGit();
  assert.equal(init.created, true);
  assert.deepEqual(events.map((e) => e.type), ["initialize"]);
  assert.equal(events[0].baseHash, svc.baseHash);
  assert.equal(events[0].workspaceDir, ws);

  assert.equal(await svc.saveCheckpoint("nothing changed"), undefined);
  assert.equal(events.length, 1, "no checkpoint event when nothing was created");

  const toMap = (diff) => new Map(diff.map((d) => [d.paths.relative, [d.content.beforeBytes, d.content.afterBytes]]));
  const hashes = await session(ws, {
    save: async (i) => (await svc.saveCheckpoint(`step ${i}`, { allowEmpty: true })).commit,
    diff: async (from, to) => toMap(await svc.getDiff(to === undefined ? { from } : { from, to })),
    restore: (h) => svc.restoreCheckpoint(h),
  });
  const cps = events.filter((e) => e.type === "checkpoint");
  assert.equal(cps.length, 11);
  assert.equal(cps[0].fromHash, svc.baseHash);
  for (let i = 1; i < cps.length; i++) {
    assert.equal(cps[i].fromHash, hashes[i - 1], `checkpoint ${i} fromHash is the previous head`);
    assert.equal(cps[i].toHash, hashes[i]);
  }
  const restores = events.filter((e) => e.type === "restore");
  assert.deepEqual(restores.map((e) => e.commitHash), [hashes[3], hashes[10]]);
  assert.ok(svc.getCheckpoints().includes(hashes[3]));
});
