// The adapters as the hosts use them, against a freshly built ckpt: many
// trackers and services of one store alive at once beside the CLI and
// `ckpt ui`, dropped without dispose(), Cline's literal create, Roo's
// initialization and events, each host's exclusions by default, and a
// store a plain command keeps locked.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { EventEmitter, once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import { createInterface } from "node:readline";
import {
  CheckpointTracker,
  CkptBusyError,
  RepoPerTaskCheckpointService,
} from "../dist/index.js";
import { buildCkpt } from "./ckpt-binary.mjs";

const run = promisify(execFile);
let binary;

before(() => {
  binary = buildCkpt();
});

/** dirs makes a workspace with a few files and a store for it; both go when the test ends. */
function dirs(t, files = 50) {
  const ws = mkdtempSync(join(tmpdir(), "ckpt-ws-"));
  const store = mkdtempSync(join(tmpdir(), "ckpt-store-"));
  t.after(() => {
    rmSync(ws, { recursive: true, force: true });
    rmSync(store, { recursive: true, force: true });
  });
  mkdirSync(join(ws, "src"));
  for (let i = 0; i < files; i++) writeFileSync(join(ws, "src", `f${i}.txt`), `file ${i}\n`.repeat(50));
  return { ws, store, opts: { binary, store, serverIdle: "3s" } };
}

const read = (ws, rel) => readFileSync(join(ws, rel), "utf8");

/** firstLine resolves with the first line a child prints on stdout. */
async function firstLine(child) {
  const rl = createInterface({ input: child.stdout });
  const [line] = await once(rl, "line");
  rl.close();
  return line;
}

test("trackers of several tasks share one store at once, beside the CLI and ckpt ui", async (t) => {
  const { ws, store, opts } = dirs(t, 2000);
  const t1 = await CheckpointTracker.create("task-1", true, ws, opts);
  const t2 = await CheckpointTracker.create("task-2", true, ws, opts); // a second tracker used to wait 30 s and fail
  writeFileSync(join(ws, "a.txt"), "one\n");
  const h1 = await t1.commit();
  writeFileSync(join(ws, "a.txt"), "two\n");
  const h2 = await t2.commit();

  // Both mid-save when a third tracker is created and the CLI and ckpt ui ask.
  for (let i = 0; i < 2000; i += 3) writeFileSync(join(ws, "src", `f${i}.txt`), `edited ${i}\n`);
  const saves = Promise.all([t1.commit(), t2.commit()]);
  const t3Created = CheckpointTracker.create("task-3", true, ws, opts);
  const cliList = run(binary, ["-C", ws, "--store", store, "--task", "task-1", "--json", "list"]);
  const ui = spawn(binary, ["-C", ws, "--store", store, "--json", "ui", "--addr", "127.0.0.1:0"], { stdio: ["ignore", "pipe", "inherit"] });
  t.after(() => ui.kill());
  const [s1, s2] = await saves;
  const t3 = await t3Created;
  const listed = JSON.parse((await cliList).stdout);
  assert.ok(listed.checkpoints.some((c) => c.id === h1), "the CLI lists task-1's checkpoints through the server");
  const { url } = JSON.parse(await firstLine(ui));
  const token = new URL(url).searchParams.get("token");
  const res = await fetch(new URL("/api/tasks", url), { headers: { "X-Ckpt-Token": token } });
  assert.equal(res.status, 200);
  const tasks = JSON.stringify(await res.json());
  for (const task of ["task-1", "task-2"]) assert.ok(tasks.includes(task), `ckpt ui lists ${task}`);

  writeFileSync(join(ws, "a.txt"), "three\n");
  assert.ok(await t3.commit());
  await t1.resetHead(h1);
  assert.equal(read(ws, "a.txt"), "one\n", "task-1 restored its own checkpoint");
  await t2.resetHead(h2);
  assert.equal(read(ws, "a.txt"), "two\n", "task-2 restored its own checkpoint");
  await t1.resetHead(s1);
  assert.equal(read(ws, "src/f0.txt"), "edited 0\n");
  assert.notEqual(s1, s2);
  assert.equal(await t2.getDiffCount(h2, s2), 667, "task-2's diff spans its own checkpoints");
});

test("Roo services of a task and its subtask work at once on one store", async (t) => {
  const { ws, opts } = dirs(t);
  const shadowDir = mkdtempSync(join(tmpdir(), "ckpt-shadow-"));
  t.after(() => rmSync(shadowDir, { recursive: true, force: true }));
  const parent = RepoPerTaskCheckpointService.create({ taskId: "parent", workspaceDir: ws, shadowDir, log: () => {}, ...opts });
  await parent.initShadowGit();
  const child = RepoPerTaskCheckpointService.create({ taskId: "subtask", workspaceDir: ws, shadowDir, log: () => {}, ...opts });
  await child.initShadowGit(); // the parent's service is alive
  writeFileSync(join(ws, "a.txt"), "parent\n");
  const p = await parent.saveCheckpoint("parent edit");
  writeFileSync(join(ws, "a.txt"), "child\n");
  const c = await child.saveCheckpoint("child edit");
  await parent.restoreCheckpoint(p.commit);
  assert.equal(read(ws, "a.txt"), "parent\n");
  await child.restoreCheckpoint(c.commit);
  assert.equal(read(ws, "a.txt"), "child\n");
  assert.equal(child.checkpointsDir, join(shadowDir, "tasks", "subtask", "checkpoints"), "checkpointsDir as Roo names it");
});

/** dropScript is a Node program that uses an adapter, prints the time of its last call's end and drops it. */
function dropScript(body) {
  const dir = mkdtempSync(join(tmpdir(), "ckpt-drop-"));
  const file = join(dir, "drop.mjs");
  writeFileSync(file, `import * as ckpt from ${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)};
const [ws, store, binary] = process.argv.slice(2);
const opts = { binary, store, serverIdle: "3s" };
${body}
process.stdout.write("done\\n");
`);
  return { file, dir };
}

for (const [name, body] of [
  ["a tracker", `const t = await ckpt.CheckpointTracker.create("dropped", true, ws, opts); await t.commit();`],
  ["a service", `const s = ckpt.RepoPerTaskCheckpointService.create({ taskId: "dropped", workspaceDir: ws, shadowDir: store, log: () => {}, ...opts });
await s.initShadowGit(); await s.saveCheckpoint("x", { allowEmpty: true });`],
]) {
  test(`${name} dropped without dispose() lets Node exit within a second of its last call`, async (t) => {
    const { ws, store } = dirs(t);
    const { file, dir } = dropScript(body);
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const child = spawn(process.execPath, [file, ws, store, binary], { stdio: ["ignore", "pipe", "inherit"] });
    const exited = once(child, "exit");
    assert.equal(await firstLine(child), "done");
    const lastCall = Date.now();
    const [code] = await exited;
    const took = Date.now() - lastCall;
    assert.equal(code, 0);
    assert.ok(took < 1000, `exited ${took} ms after its last call`);
  });
}

test("Cline's literal create: a tracker when enabled, undefined when not", async (t) => {
  const { ws, opts } = dirs(t);
  const on = await CheckpointTracker.create("task-lit", true, ws, opts);
  assert.ok(on instanceof CheckpointTracker);
  assert.match(await on.commit(), /^[0-9a-f]{64}$/);
  assert.equal(await CheckpointTracker.create("task-lit", false, ws, opts), undefined);
  const roots = await CheckpointTracker.create("task-lit", true, [ws, "/elsewhere"], opts);
  assert.equal(roots.cwd, ws, "the first of several roots");
  await assert.rejects(CheckpointTracker.create("task-lit", true, join(ws, "missing"), opts), /Cannot access workspace directory/);
});

test("isInitialized is false until init succeeds, and a failed init can be retried", async (t) => {
  const { ws, store, opts } = dirs(t);
  const occupied = join(store, "file");
  writeFileSync(occupied, "not a store\n");
  const svc = RepoPerTaskCheckpointService.create({ taskId: "retry", workspaceDir: ws, shadowDir: store, log: () => {}, ...opts, store: occupied });
  assert.equal(svc.isInitialized, false);
  const init = svc.initShadowGit();
  assert.equal(svc.isInitialized, false, "not while initializing");
  await assert.rejects(init);
  assert.equal(svc.isInitialized, false, "not after a failure");
  assert.equal(svc.baseHash, undefined);
  await assert.rejects(svc.saveCheckpoint("x"), /not initialized/);
  rmSync(occupied);
  const { created } = await svc.initShadowGit();
  assert.equal(created, true);
  assert.equal(svc.isInitialized, true);
  assert.match(svc.baseHash, /^[0-9a-f]{64}$/);
  await assert.rejects(svc.initShadowGit(), /already initialized/);
});

test("Roo's service emits initialize with its type first, and logs Roo's lines", async (t) => {
  const { ws, store, opts } = dirs(t);
  const seen = [];
  const emit = EventEmitter.prototype.emit;
  EventEmitter.prototype.emit = function (name, ...args) {
    if (name === "initialize") seen.push(args[0]);
    return emit.call(this, name, ...args);
  };
  const log = [];
  let svc;
  try {
    svc = RepoPerTaskCheckpointService.create({ taskId: "events", workspaceDir: ws, shadowDir: store, log: (m) => log.push(m), ...opts });
    await svc.initShadowGit();
  } finally {
    EventEmitter.prototype.emit = emit;
  }
  assert.equal(seen[0]?.type, "initialize", "the first initialize emitted anywhere is the service's");
  assert.equal(seen[0].workspaceDir, ws);
  assert.equal(seen[0].baseHash, svc.baseHash);
  await svc.saveCheckpoint("empty", { allowEmpty: true });
  await svc.saveCheckpoint("default");
  assert.equal(log.filter((m) => m.includes("starting checkpoint save") && m.includes("allowEmpty: true")).length, 1);
  assert.equal(log.filter((m) => m.includes("starting checkpoint save") && m.includes("allowEmpty: false")).length, 1);
  assert.ok(log.some((m) => m.startsWith("[RepoPerTaskCheckpointService#saveCheckpoint] checkpoint saved in ")));
  assert.ok(log.some((m) => m.includes("found no changes to commit")));
});

test("each adapter applies its host's exclusions by default", async (t) => {
  const roo = dirs(t);
  const svc = RepoPerTaskCheckpointService.create({ taskId: "ex", workspaceDir: roo.ws, shadowDir: roo.store, log: () => {}, ...roo.opts });
  await svc.initShadowGit();
  writeFileSync(join(roo.ws, "ignored.log"), "log line\n");
  assert.equal(await svc.saveCheckpoint("only a log file"), undefined, "Roo's profile excludes *.log");

  const cline = dirs(t);
  const tracker = await CheckpointTracker.create("ex", true, cline.ws, cline.opts);
  const base = await tracker.commit();
  mkdirSync(join(cline.ws, ".clinerules"));
  writeFileSync(join(cline.ws, ".clinerules", "rules.md"), "x\n");
  writeFileSync(join(cline.ws, "debug.log"), "x\n");
  writeFileSync(join(cline.ws, ".env.local"), "SECRET=1\n");
  writeFileSync(join(cline.ws, "kept.txt"), "x\n");
  assert.deepEqual((await tracker.getDiffSet(base)).map((e) => e.relativePath), ["kept.txt"], "Cline's profile excludes its list");

  const other = dirs(t);
  const def = await CheckpointTracker.create("ex", true, other.ws, { ...other.opts, profile: "default" });
  const base2 = await def.commit();
  writeFileSync(join(other.ws, "debug.log"), "x\n");
  assert.deepEqual((await def.getDiffSet(base2)).map((e) => e.relativePath), ["debug.log"], "the profile is overridable");
});

test("Cline's and Roo's adapters share one workspace and store, each with its host's exclusions", async (t) => {
  const { ws, store, opts } = dirs(t);
  const tracker = await CheckpointTracker.create("cline-task", true, ws, opts);
  const base = await tracker.commit();
  // The tracker's calls started the store's server with Cline's profile; Roo's
  // service attaches to it with Roo's (refused until the server served each
  // client under its own options).
  const svc = RepoPerTaskCheckpointService.create({ taskId: "roo-task", workspaceDir: ws, shadowDir: store, log: () => {}, ...opts });
  await svc.initShadowGit();
  mkdirSync(join(ws, ".clinerules"));
  writeFileSync(join(ws, ".clinerules", "rules.md"), "x\n");
  writeFileSync(join(ws, "debug.log"), "x\n");
  writeFileSync(join(ws, "kept.txt"), "x\n");
  assert.deepEqual((await tracker.getDiffSet(base)).map((e) => e.relativePath), ["kept.txt"], "Cline's exclusions on Cline's calls");
  assert.ok(await svc.saveCheckpoint("roo"), "Roo's save records the change");
  assert.deepEqual((await svc.getDiff({ from: "@2" })).map((d) => d.paths.relative), [], "nothing changed since, under Roo's rules");
  assert.deepEqual((await svc.getDiff({ from: "@1", to: "@2" })).map((d) => d.paths.relative).sort(), [".clinerules/rules.md", "kept.txt"],
    "Roo's exclusions (*.log) on Roo's calls, Cline's (.clinerules/) not");
  await svc.dispose();
});

test("a store a plain command keeps locked fails with CkptBusyError naming the holder", async (t) => {
  const { ws, store } = dirs(t);
  writeFileSync(join(ws, "big.bin"), randomBytes(4 << 20));
  await run(binary, ["-C", ws, "--store", store, "save"]);
  // An export whose output nobody reads holds the store, serving no client (a
  // stdio serve or mcp would serve the store to every later client instead).
  const holder = spawn(binary, ["-C", ws, "--store", store, "export", "HEAD", "--tar", "-"], { stdio: ["ignore", "pipe", "inherit"] });
  t.after(() => {
    holder.stdout.resume(); // a write it is blocked in would outlast the signal
    holder.kill();
  });
  await once(holder.stdout, "data"); // it has the store
  holder.stdout.pause();
  const err = await CheckpointTracker.create("late", true, ws, { binary, store, serverArgs: ["--lock-timeout", "300ms"] }).then(
    () => assert.fail("created"),
    (e) => e,
  );
  assert.ok(err instanceof CkptBusyError, `${err}`);
  assert.equal(err.exitCode, 3);
  assert.match(err.message, new RegExp(`pid ${holder.pid} \\(ckpt export\\)`), "the message names the holder");
});
