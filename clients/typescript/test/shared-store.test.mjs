// Clients of one store started by different hosts, against a freshly built
// ckpt: an MCP server beside an adapter, and clients of separate Node
// processes racing to start the store's server.
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
import { CheckpointTracker } from "../dist/index.js";
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

/** mcpClient runs `ckpt mcp` on the store as an MCP host would. */
async function mcpClient(t, ws, store, task) {
  // --lock-timeout 0: an mcp that took the lock instead of attaching would fail busy.
  const transport = new StdioClientTransport({ command: binary, args: ["-C", ws, "--store", store, "--lock-timeout", "0", "--task", task, "mcp"], stderr: "inherit" });
  const client = new Client({ name: "shared-store-test", version: "1.0.0" });
  await client.connect(transport);
  t.after(() => client.close());
  await client.listTools();
  return async (name, args = {}) => {
    const res = await client.callTool({ name: `ckpt_${name}`, arguments: args });
    assert.ok(!res.isError, `${name}: ${JSON.stringify(res.content)}`);
    return res.structuredContent;
  };
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
