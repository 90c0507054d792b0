// Clients of one store started by different hosts, against a freshly built
// ckpt: an MCP server beside an adapter, an adapter beside a stdio serve or
// MCP server that owns the store, and clients of separate Node processes
// racing to start the store's server.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CheckpointTracker, CkptClient, CkptSharedClient } from "../dist/index.js";
import { buildCkpt } from "./ckpt-binary.mjs";

let binary;

before(() => {
  binary = buildCkpt();
});

/** dirs makes a workspace with a file and an empty store; both go when the test ends. */
function dirs(t) {
  const ws = mkdtempSync(join(tmpdir(), "ckpt-ws-"));
  const store = mkdtempSync(join(tmpdir(), "ckpt-store-"));
  t.after(() => {
    rmSync(ws, { recursive: true, force: true });
    rmSync(store, { recursive: true, force: true });
  });
  writeFileSync(join(ws, "a.txt"), "base\n");
  return { ws, store };
}

const read = (ws, rel) => readFileSync(join(ws, rel), "utf8");

/**
 * mcpClient runs `ckpt mcp` (with extra global flags) on the store as an MCP
 * host would; it resolves with a function calling its tools, whose pid is
 * the process's.
 */
async function mcpClient(t, ws, store, task, flags = []) {
  // --lock-timeout 0: an mcp that took the lock instead of attaching would fail busy.
  const args = ["-C", ws, "--store", store, "--lock-timeout", "0", "--task", task, ...flags, "mcp"];
  const transport = new StdioClientTransport({ command: binary, args, stderr: "inherit" });
  const client = new Client({ name: "shared-store-test", version: "1.0.0" });
  await client.connect(transport);
  t.after(() => client.close());
  await client.listTools();
  const call = async (name, args = {}) => {
    const res = await client.callTool({ name: `ckpt_${name}`, arguments: args });
    assert.ok(!res.isError, `${name}: ${JSON.stringify(res.content)}`);
    return res.structuredContent;
  };
  return Object.assign(call, { pid: transport.pid });
}

test("an MCP server and an adapter work on one store at once", async (t) => {
  const { ws, store } = dirs(t);
  const tracker = await CheckpointTracker.create("cline-task", true, ws, { binary, store, serverIdle: "3s" });
  const base = await tracker.commit(); // the tracker started the store's server
  const mcp = await mcpClient(t, ws, store, "agent");

  writeFileSync(join(ws, "a.txt"), "agent\n");
  const agent = await mcp("save", { message: "agent step" });
  assert.equal(agent.created, true);
  assert.equal(agent.task, "agent");
  writeFileSync(join(ws, "a.txt"), "cline\n");
  const [cline, listed] = await Promise.all([tracker.commit(), mcp("list")]);
  assert.deepEqual(listed.checkpoints.map((c) => c.id), [agent.id], "the agent's task holds its own checkpoint");

  await mcp("restore", { ref: agent.id });
  assert.equal(read(ws, "a.txt"), "agent\n", "the MCP tool restored its task's checkpoint");
  await tracker.resetHead(cline);
  assert.equal(read(ws, "a.txt"), "cline\n", "the tracker restored its own");
  assert.equal(await tracker.getDiffCount(base, cline), 1);
  const tasks = (await mcp("tasks")).tasks.map((x) => x.name);
  for (const task of ["agent", "cline-task"]) assert.ok(tasks.includes(task), `${task} in ${tasks}`);
});

/** owners start a stdio serve or an MCP server on the store with Cline's profile; each resolves with its pid and a function listing the store's tasks. */
const owners = {
  async serve(t, ws, store) {
    const owner = CkptClient.start({ binary, workspace: ws, store, task: "host", args: ["--lock-timeout", "0", "--profile", "cline"] });
    t.after(() => owner.close());
    await owner.save({ message: "by the owner" });
    return { pid: owner.pid, tasks: async () => (await owner.tasks()).tasks.map((x) => x.name) };
  },
  async mcp(t, ws, store) {
    const owner = await mcpClient(t, ws, store, "host", ["--profile", "cline"]);
    await owner("save", { message: "by the owner" });
    return { pid: owner.pid, tasks: async () => (await owner("tasks")).tasks.map((x) => x.name) };
  },
};

// A stdio serve or MCP server that finds no server of its store becomes it,
// listening on the store's endpoint while it runs, so an adapter created
// after it attaches to it instead of waiting for its lock.
for (const [kind, start] of Object.entries(owners)) {
  test(`an adapter saves and restores beside a ${kind} that owns the store`, async (t) => {
    const { ws, store } = dirs(t);
    const owner = await start(t, ws, store);
    const probe = CkptSharedClient.connect({ workspace: ws, store, binary, task: "probe" });
    t.after(() => probe.close());
    assert.equal((await probe.attach()).pid, owner.pid, `the shared client attached to the ${kind}, starting no server`);

    const tracker = await CheckpointTracker.create("cline-task", true, ws, { binary, store, serverArgs: ["--lock-timeout", "0"] });
    writeFileSync(join(ws, "a.txt"), "one\n");
    const one = await tracker.commit();
    writeFileSync(join(ws, "a.txt"), "two\n");
    const two = await tracker.commit();
    assert.equal(await tracker.getDiffCount(one, two), 1);
    await tracker.resetHead(one);
    assert.equal(read(ws, "a.txt"), "one\n", "the tracker restored its checkpoint");
    const tasks = await owner.tasks();
    for (const task of ["host", "cline-task"]) assert.ok(tasks.includes(task), `the ${kind} lists ${task} in ${tasks}`);
  });
}

/** serversOf lists the pids of the `ckpt serve` processes running for store (ps; not on Windows). */
function serversOf(store) {
  const out = execFileSync("ps", ["-A", "-o", "pid=,args="], { encoding: "utf8" });
  return out.split("\n").filter((l) => l.includes(" serve ") && l.includes(store)).map((l) => Number(l.trim().split(/\s+/)[0]));
}

/** alive says whether process pid exists. */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === "EPERM";
  }
}

/** until polls cond until it holds, failing after a minute. */
async function until(cond, what) {
  for (const deadline = Date.now() + 60_000; !cond(); await sleep(50)) {
    assert.ok(Date.now() < deadline, `${what}: not within a minute`);
  }
}

const racer = fileURLToPath(new URL("./racer.mjs", import.meta.url));

/**
 * race runs one racer.mjs process per name on a fresh store with no server,
 * releases them at once and checks each saved and restored its own task;
 * it resolves with their results.
 */
async function race(t, names, { idle, rounds, lingerMs }) {
  const { ws, store } = dirs(t);
  const racers = names.map((name) => {
    const child = spawn(process.execPath, [racer, ws, store, binary, name, idle, String(rounds), String(lingerMs)],
      { stdio: ["pipe", "pipe", "inherit"] });
    const line = once(createInterface({ input: child.stdout }), "line");
    return { name, child, line, exited: once(child, "exit") };
  });
  // Each has loaded the client when it reads stdin; "go" lets all of them dial at once.
  for (const r of racers) r.child.stdin.end("go\n");
  const results = await Promise.all(racers.map(async (r) => ({ name: r.name, ...JSON.parse((await r.line)[0]) })));
  for (const r of results) {
    assert.equal(r.error, undefined, `${r.name}: ${r.error}`);
    assert.equal(r.saved.length, rounds);
    assert.equal(r.read, `${r.name} 0\n`, `${r.name} restored its own first save`);
    for (const id of r.saved) assert.ok(r.ids.includes(id), `${r.name} lists its saves`);
  }
  for (const r of racers) assert.deepEqual(await r.exited, [0, null], `${r.name} exited by itself`);
  return { store, results };
}

test("clients of separate processes racing to start the store's server end on one, which exits when idle", async (t) => {
  const { store, results } = await race(t, ["r1", "r2", "r3", "r4", "r5", "r6"], { idle: "2s", rounds: 2, lingerMs: 1000 });
  const pids = new Set(results.map((r) => r.pid));
  assert.equal(pids.size, 1, `every client attached to one server: ${[...pids]}`);
  const [server] = pids;
  if (process.platform !== "win32") await until(() => serversOf(store).every((pid) => pid === server), "the losers of the race exit");
  // The clients are gone: the server exits after its 2 s without one.
  await until(() => !alive(server), `the server ${server} exits after its last client`);
  if (process.platform !== "win32") assert.deepEqual(serversOf(store), [], "no ckpt serve left");
});

// With a server that stops 20 ms after its last client and clients that
// drop their connection after each call, calls keep meeting a server as it
// stops: a client must then dial or start one again, not fail.
test("clients racing servers that stop and start all the time lose no call", async (t) => {
  const { store } = await race(t, ["s1", "s2", "s3", "s4", "s5"], { idle: "20ms", rounds: 20, lingerMs: 0 });
  if (process.platform !== "win32") await until(() => serversOf(store).length === 0, "every server exits");
});
