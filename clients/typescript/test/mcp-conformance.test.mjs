// The official TypeScript MCP client (@modelcontextprotocol/sdk) against
// `ckpt mcp` built from this repository, spawned on a temporary workspace
// and store: initialize, tools/list, every tool called validly and
// invalidly, progress for _meta.progressToken, cancellation and ping.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode, LoggingMessageNotificationSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { buildCkpt } from "./ckpt-binary.mjs";

let binary;

before(() => {
  binary = buildCkpt();
});

/** access is what each engine operation does, as its tool's annotations must say. */
const access = {
  save: "write", list: "query", show: "query", ls: "query", cat: "query", diff: "query",
  restore: "destructive", tasks: "query", drop: "destructive", gc: "destructive", verify: "query", stats: "query",
  push: "write", pull: "write", log: "query", export: "write", bisect: "write",
};

/**
 * connect spawns `ckpt mcp` on a fresh workspace and store through the
 * SDK's stdio transport and lists the tools, so that every later callTool
 * checks its structured content against the tool's output schema.
 * onmessage, if given, sees each message from the server before the SDK
 * dispatches it (the SDK calls a transport's own onmessage first).
 */
async function connect(t, { onmessage } = {}) {
  const ws = mkdtempSync(join(tmpdir(), "ckpt-mcp-ws-"));
  const store = mkdtempSync(join(tmpdir(), "ckpt-mcp-store-"));
  // A file:// remote for ckpt_push and ckpt_pull, added before the server holds the store.
  const remote = mkdtempSync(join(tmpdir(), "ckpt-mcp-remote-"));
  execFileSync(binary, ["-C", ws, "--store", store, "remote", "add", "origin", pathToFileURL(remote).href]);
  const transport = new StdioClientTransport({ command: binary, args: ["-C", ws, "--store", store, "mcp"], stderr: "inherit" });
  if (onmessage) transport.onmessage = onmessage;
  const client = new Client({ name: "ckpt-conformance", version: "1.0.0" });
  await client.connect(transport);
  t.after(async () => {
    await client.close();
    rmSync(ws, { recursive: true, force: true });
    rmSync(store, { recursive: true, force: true });
    rmSync(remote, { recursive: true, force: true });
  });
  await client.listTools();
  return { client, ws, remote, transport };
}

/** call runs tool ckpt_<name> and returns its structured content; the call must succeed. */
async function call(client, name, args = {}) {
  const res = await client.callTool({ name: `ckpt_${name}`, arguments: args });
  assert.ok(!res.isError, `${name} ${JSON.stringify(args)} failed: ${JSON.stringify(res.content)}`);
  assert.equal(res.content[0]?.type, "text", `${name}: text content beside the structured one`);
  return res.structuredContent;
}

/** fails runs tool ckpt_<name>, which must fail as a tool error, and returns the result. */
async function fails(client, name, args) {
  const res = await client.callTool({ name: `ckpt_${name}`, arguments: args });
  assert.equal(res.isError, true, `${name} ${JSON.stringify(args)} succeeded: ${JSON.stringify(res.structuredContent)}`);
  assert.ok(res.content[0]?.text, `${name}: an error message`);
  return res;
}

test("initialize: server info, instructions, capabilities and ping", async (t) => {
  const { client } = await connect(t);
  const info = client.getServerVersion();
  assert.equal(info.name, "ckpt");
  assert.match(info.version, /^\d+\.\d+\.\d+/);
  assert.ok(info.title);
  const caps = client.getServerCapabilities();
  assert.ok(caps.tools, "tools capability");
  assert.ok(caps.logging, "logging capability (events are log messages)");
  assert.match(client.getInstructions(), /checkpoint/);
  assert.deepEqual(await client.ping(), {});
});

test("tools/list: every engine operation, with schemas, a title and the hints of what it does", async (t) => {
  const { client } = await connect(t);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((x) => x.name).sort(), Object.keys(access).map((n) => `ckpt_${n}`).sort());
  for (const tool of tools) {
    const kind = access[tool.name.slice("ckpt_".length)];
    const ann = tool.annotations ?? {};
    assert.equal(tool.inputSchema.type, "object", `${tool.name} input schema`);
    assert.equal(tool.outputSchema?.type, "object", `${tool.name} output schema`);
    assert.ok(tool.title && ann.title && tool.description, `${tool.name} title and description`);
    assert.equal(ann.readOnlyHint === true, kind === "query", `${tool.name} readOnlyHint`);
    if (kind !== "query") assert.equal(ann.destructiveHint, kind === "destructive", `${tool.name} destructiveHint`);
  }
  const required = Object.fromEntries(tools.map((x) => [x.name, x.inputSchema.required ?? []]));
  // cat names its file by path or by path_base64 (a name that is not UTF-8), so only ref is required.
  assert.deepEqual(required.ckpt_cat, ["ref"]);
  const catProps = Object.keys(tools.find((x) => x.name === "ckpt_cat").inputSchema.properties ?? {});
  assert.ok(catProps.includes("path") && catProps.includes("path_base64"), "ckpt_cat takes path or path_base64");
  assert.deepEqual(required.ckpt_drop, ["task"]);
});

test("every tool answers a valid call with what the workspace holds", async (t) => {
  const { client, ws, remote } = await connect(t);
  const events = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    if (n.params.logger === "ckpt") events.push(n.params.data.event);
  });
  await client.setLoggingLevel("info");
  mkdirSync(join(ws, "src"));
  writeFileSync(join(ws, "a.txt"), "one\n");
  writeFileSync(join(ws, "src/b.txt"), "bee\n");

  const first = await call(client, "save", { message: "first", state: "chat at step 1" });
  assert.deepEqual([first.created, first.seq, first.stats.files], [true, 1, 2]);
  assert.match(first.id, /^[0-9a-f]{64}$/);

  writeFileSync(join(ws, "a.txt"), "two\n");
  const diff = await call(client, "diff", { from: "@1" });
  assert.equal(diff.to, "workspace");
  assert.deepEqual(diff.files.map((f) => [f.path, f.status, f.before, f.after]), [["a.txt", "modified", "one\n", "two\n"]]);

  const second = await call(client, "save", { message: "second" });
  assert.deepEqual([second.created, second.seq, second.parent], [true, 2, first.id]);
  const unchanged = await call(client, "save", {});
  assert.deepEqual([unchanged.created, unchanged.id], [false, second.id]);

  const list = await call(client, "list");
  assert.deepEqual(list.checkpoints.map((c) => [c.seq, c.message, c.head]), [[1, "first", false], [2, "second", true]]);
  const show = await call(client, "show", { ref: "HEAD~1" });
  assert.deepEqual([show.id, show.message, show.stats.files], [first.id, "first", 2]);
  const ls = await call(client, "ls", { ref: "@1" });
  assert.deepEqual(ls.entries.map((e) => [e.path, e.kind]).sort(), [["a.txt", "file"], ["src", "dir"]]);
  const cat = await call(client, "cat", { ref: "@1", path: "a.txt" });
  assert.deepEqual([cat.content, cat.size], ["one\n", 4]);

  const restore = await call(client, "restore", { ref: "@1", only: "both" });
  assert.equal(restore.restored, first.id);
  assert.deepEqual(restore.written_paths, ["a.txt"]);
  assert.equal(restore.state_content, "chat at step 1");
  assert.equal(readFileSync(join(ws, "a.txt"), "utf8"), "one\n", "restore rewound the file on disk");

  assert.deepEqual(events, ["initialize", "checkpoint", "checkpoint", "restore"], "events as log messages of the logger ckpt");

  await call(client, "save", { task: "scratch", message: "throwaway" });
  const tasks = await call(client, "tasks");
  assert.deepEqual(tasks.tasks.map((x) => [x.name, x.checkpoints]).sort(), [["default", 2], ["scratch", 1]]);
  const drop = await call(client, "drop", { task: "scratch" });
  assert.deepEqual([drop.task, drop.checkpoints.length], ["scratch", 1]);
  assert.deepEqual((await call(client, "tasks")).tasks.map((x) => x.name), ["default"]);

  writeFileSync(join(ws, "a.txt"), "three\n");
  const third = await call(client, "save", { message: "third" });
  const gc = await call(client, "gc", { keep_last: 1 });
  assert.equal(gc.policy.keep_last, 1);
  assert.deepEqual(gc.dropped.map((d) => [d.task, d.seq, d.reason]), [["default", 1, "keep-last"], ["default", 2, "keep-last"]]);
  assert.deepEqual((await call(client, "list")).checkpoints.map((c) => c.id), [third.id], "gc kept the head only");
  const verify = await call(client, "verify");
  assert.equal(verify.ok, true);
  const stats = await call(client, "stats");
  assert.ok(stats.checkpoints >= 1 && stats.blobs >= 2, JSON.stringify(stats));

  const push = await call(client, "push", { remote: "origin" });
  assert.deepEqual([push.remote, push.head, push.up_to_date], ["origin", third.id, false]);
  assert.ok(readdirSync(remote).length > 0, "the push wrote to the remote");
  assert.equal((await call(client, "push", {})).up_to_date, true, "a second push finds the remote up to date");
  const pull = await call(client, "pull", { remote: "origin" });
  assert.deepEqual([pull.remote, pull.head, pull.moved], ["origin", third.id, false]);
});

test("every tool answers an invalid call with a tool error, an unknown tool with a JSON-RPC error", async (t) => {
  const { client, ws } = await connect(t);
  writeFileSync(join(ws, "a.txt"), "one\n");
  await call(client, "save", {});
  for (const name of Object.keys(access)) {
    const res = await fails(client, name, { bogus: 1 });
    assert.match(res.content[0].text, /bogus/, name);
  }
  for (const [name, args] of [["show", {}], ["cat", { ref: "@1" }], ["drop", {}], ["save", { state: "x", state_base64: "eA==" }]]) {
    await fails(client, name, args);
  }
  for (const [name, args] of [["show", { ref: "@9" }], ["restore", { ref: "@9" }], ["cat", { ref: "@1", path: "nope.txt" }],
    ["ls", { ref: "nothex" }], ["diff", { from: "@9" }]]) {
    const res = await fails(client, name, args);
    const err = res.structuredContent?.error;
    assert.equal(err?.data?.exit_code, 2, `${name}: ${JSON.stringify(res.structuredContent)}`);
  }
  const unknown = await fails(client, "show", { ref: "@9" });
  assert.equal(unknown.structuredContent.error.data.kind, "unknown_ref");
  const usage = await fails(client, "gc", { max_age: "soon" });
  assert.equal(usage.structuredContent.error.data.kind, "usage");
  // A restore that has to leave an unsaved file alone fails with the conflicts.
  mkdirSync(join(ws, "d"));
  writeFileSync(join(ws, "d/new.txt"), "never saved\n");
  const conflict = await fails(client, "restore", { ref: "@1", no_backup: true });
  const data = conflict.structuredContent.error.data;
  assert.deepEqual([data.kind, data.exit_code, data.restore?.restored], ["conflict", 6, (await call(client, "show", { ref: "@1" })).id]);
  assert.ok(data.conflicts.length > 0 && data.conflicts.every((c) => c.path.startsWith("d")), JSON.stringify(data.conflicts));
  assert.equal(readFileSync(join(ws, "d/new.txt"), "utf8"), "never saved\n");
  await assert.rejects(client.callTool({ name: "ckpt_nope", arguments: {} }),
    (err) => err instanceof McpError && err.code === ErrorCode.InvalidParams);
  assert.equal(readFileSync(join(ws, "a.txt"), "utf8"), "one\n", "no failed call touched the workspace");
});

/** grow adds n small files in directories of 100 under dir. */
function grow(dir, n) {
  for (let i = 0; i < n; i++) {
    if (i % 100 === 0) mkdirSync(join(dir, `d${i / 100}`), { recursive: true });
    writeFileSync(join(dir, `d${Math.floor(i / 100)}`, `f${i}.txt`), `file ${i}\n`.repeat(8));
  }
}

// The engine reports a scan's progress at most every 200 ms, so only a save
// that runs longer reports any: the tree doubles until a save does, so the
// test holds whatever the machine's speed (here 8,000 to 16,000 files do).
test("a save with onprogress gets progress notifications with increasing progress", async (t) => {
  const { client, ws } = await connect(t);
  let files = 0;
  for (let round = 0; round < 6; round++) {
    const n = files === 0 ? 8000 : files;
    grow(join(ws, `round${round}`), n);
    files += n;
    const seen = [];
    const res = await client.callTool({ name: "ckpt_save", arguments: { message: `round ${round}` } }, undefined,
      { onprogress: (p) => seen.push(p) });
    assert.ok(!res.isError && res.structuredContent.created, JSON.stringify(res.content));
    assert.equal(res.structuredContent.stats.files, files);
    if (seen.length === 0) continue;
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress, JSON.stringify(seen));
    assert.match(seen[0].message, /^scan: \d+ files$/);
    return;
  }
  assert.fail(`no progress from saves of up to ${files} files`);
});

test("aborting a call in flight rejects it and the server stays usable", async (t) => {
  // The SDK settles a call on its response at once but runs notification
  // handlers a microtask later, so an abort from onprogress can come after
  // a response read in the same chunk. The abort is made where the message
  // arrives instead: the first progress notification proves the call is
  // running, and nothing from the server after it reaches the SDK first.
  let onProgressMessage = () => {};
  const { client, ws, transport } = await connect(t, {
    onmessage: (msg) => msg.method === "notifications/progress" && onProgressMessage(msg),
  });
  const sent = [];
  const send = transport.send.bind(transport);
  transport.send = (msg, opts) => {
    sent.push(msg);
    return send(msg, opts);
  };
  grow(ws, 400);
  await call(client, "save", { message: "many blobs" });
  const ac = new AbortController();
  const reason = new Error("user pressed stop");
  let abortedOn;
  onProgressMessage = (msg) => {
    abortedOn ??= msg.params.progressToken;
    ac.abort(reason);
  };
  // onprogress makes the SDK ask for progress (verify reports every 64 blobs).
  const pending = client.callTool({ name: "ckpt_verify", arguments: {} }, undefined, {
    signal: ac.signal,
    onprogress: () => {},
  });
  await assert.rejects(pending, (err) => err instanceof McpError && err.message.includes(reason.message));
  const request = sent.find((m) => m.method === "tools/call" && m.params.name === "ckpt_verify");
  assert.equal(abortedOn, request.params._meta.progressToken, "the abort came from the verify's own progress");
  assert.ok(sent.some((m) => m.method === "notifications/cancelled" && m.params.requestId === request.id),
    "the server was told of the cancellation");
  assert.deepEqual(await client.ping(), {});
  const verify = await call(client, "verify");
  assert.equal(verify.ok, true);
  writeFileSync(join(ws, "after.txt"), "after the abort\n");
  const saved = await call(client, "save", { message: "after the abort" });
  assert.deepEqual([saved.created, saved.seq], [true, 2]);
  assert.ok(existsSync(join(ws, "after.txt")));
});
