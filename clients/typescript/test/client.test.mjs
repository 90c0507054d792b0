import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  CkptBusyError,
  CkptCancelledError,
  CkptClient,
  CkptConflictError,
  CkptConnectionError,
  CkptCorruptError,
  CkptError,
  CkptRefusedError,
  CkptUnknownRefError,
  CkptUsageError,
} from "../dist/index.js";

const fake = fileURLToPath(new URL("../testdata/fake-ckpt.mjs", import.meta.url));

/** start runs the fake server and closes it when the test ends. */
function start(t, opts = {}) {
  const client = CkptClient.start({ binary: fake, workspace: "/ws", closeGraceMs: 2000, ...opts });
  t.after(() => client.close());
  return client;
}

test("start passes serve, -C, --store, --task and extra args", async (t) => {
  const client = start(t, { store: "/st", task: "chat-1", args: ["--idle", "5m"] });
  const { argv } = await client.call("argv");
  assert.deepEqual(argv, ["serve", "-C", "/ws", "--store", "/st", "--task", "chat-1", "--idle", "5m"]);
});

test("a call resolves with the result", async (t) => {
  const client = start(t);
  assert.deepEqual(await client.call("echo", { a: [1, "x"] }), { a: [1, "x"] });
});

test("typed method stubs send their params under the method name", async (t) => {
  const client = start(t);
  const res = await client.call("echo", { ref: "HEAD~1", dry_run: true });
  assert.deepEqual(res, { ref: "HEAD~1", dry_run: true });
  for (const name of ["save", "list", "show", "ls", "cat", "diff", "restore", "tasks", "drop", "gc", "verify", "stats", "log", "export", "bisect"]) {
    assert.equal(typeof client[name], "function", name);
  }
  await assert.rejects(client.save({ message: "m" }), (err) => err instanceof CkptUsageError && /"save"/.test(err.message));
});

test("concurrent calls are matched to their replies out of order", async (t) => {
  const client = start(t);
  const n = 20;
  const results = await Promise.all(Array.from({ length: n }, () => client.call("gate", { n })));
  const ids = results.map((r) => r.id);
  assert.equal(new Set(ids).size, n);
  assert.deepEqual([...ids].sort((a, b) => a - b), ids, "each call got its own reply, though the server answered in reverse");
});

test("aborting a call rejects it and sends $/cancelRequest", async (t) => {
  const client = start(t);
  const ac = new AbortController();
  const pending = client.call("block", {}, { signal: ac.signal });
  const reason = new Error("user pressed stop");
  ac.abort(reason);
  await assert.rejects(pending, (err) => err === reason);
  const { cancelled } = await client.call("cancelled");
  assert.deepEqual(cancelled, [1]);
});

test("a call with an aborted signal is never sent", async (t) => {
  const client = start(t);
  await assert.rejects(client.call("echo", {}, { signal: AbortSignal.abort() }), { name: "AbortError" });
  assert.deepEqual(await client.call("cancelled"), { cancelled: [] });
});

test("a server-side cancellation rejects with CkptCancelledError", async (t) => {
  const client = start(t);
  const err = { code: -32800, message: "request cancelled" };
  await assert.rejects(client.call("fail", err), (e) => e instanceof CkptCancelledError && e.code === -32800);
});

test("progress reaches the call's callback only", async (t) => {
  const client = start(t);
  const seen = [];
  const res = await client.call("progress", { x: 1, _meta: { other: true } }, { onProgress: (v) => seen.push(v) });
  assert.deepEqual(res, { steps: 3 });
  assert.deepEqual(seen, [{ done: 1, total: 3 }, { done: 2, total: 3 }, { done: 3, total: 3 }]);
  const echoed = await client.call("echo", { x: 1 }, { onProgress: () => {} });
  assert.match(echoed._meta.progressToken, /^ckpt-\d+$/);
  assert.equal(echoed.x, 1);
});

test("errors are typed from data.exit_code and data.kind, not from the text", async (t) => {
  const client = start(t);
  const cases = [
    [{ exit_code: 3, kind: "busy" }, CkptBusyError],
    [{ exit_code: 3 }, CkptBusyError],
    [{ exit_code: 2, kind: "unknown_ref" }, CkptUnknownRefError],
    [{ exit_code: 2 }, CkptUnknownRefError],
    [{ exit_code: 2, kind: "usage" }, CkptUsageError],
    [{ exit_code: 4 }, CkptRefusedError],
    [{ exit_code: 5 }, CkptCorruptError],
    [{ exit_code: 6, conflicts: [{ path: "a.txt", reason: "untracked" }] }, CkptConflictError],
    [{ exit_code: 1 }, CkptError],
    [{ exit_code: 5, kind: "constructor" }, CkptCorruptError],
    [{ exit_code: 1, kind: "a kind from a newer server" }, CkptError],
    [undefined, CkptError],
  ];
  for (const [data, cls] of cases) {
    const wire = { code: -32000, message: "store is busy (conflict, corrupt, unknown ref)", ...(data ? { data } : {}) };
    const err = await client.call("fail", wire).then(() => assert.fail("resolved"), (e) => e);
    assert.equal(err.constructor, cls, JSON.stringify(data));
    assert.ok(err instanceof CkptError);
    assert.equal(err.code, -32000);
    assert.equal(err.exitCode, data?.exit_code);
    assert.deepEqual(err.data, data);
    assert.equal(err.message, wire.message);
  }
  const conflict = await client.call("fail", { code: -32000, message: "m", data: { exit_code: 6, conflicts: [{ path: "a", reason: "r" }] } }).catch((e) => e);
  assert.deepEqual(conflict.conflicts, [{ path: "a", reason: "r" }]);
  await assert.rejects(client.call("fail", { code: -32602, message: "invalid params: unknown field" }), CkptUsageError);
  await assert.rejects(client.call("nosuch"), CkptUsageError);
});

test("server notifications are emitted as events; an unheard error event is dropped", async (t) => {
  const client = start(t);
  const got = new Promise((resolve) => client.on("checkpoint", resolve));
  const ev = { fromHash: "a1", toHash: "b2", duration: 12 };
  await client.call("emit", { method: "checkpoint", params: ev });
  assert.deepEqual(await got, ev);
  await client.call("emit", { method: "error", params: { error: "disk full" } });
  const errors = [];
  client.on("error", (e) => errors.push(e));
  await client.call("emit", { method: "error", params: { error: "disk full" } });
  assert.deepEqual(errors, [{ error: "disk full" }]);
});

test("the child dying mid-call rejects pending and later calls with its exit and stderr", async (t) => {
  const client = start(t);
  const exited = new Promise((resolve) => client.on("exit", resolve));
  const blocked = client.call("block");
  const dying = client.call("die", { code: 7 });
  for (const p of [blocked, dying]) {
    await assert.rejects(p, (err) => {
      assert.ok(err instanceof CkptConnectionError);
      assert.equal(err.exitCode, 7);
      assert.match(err.message, /exited \(code 7.*fatal: store vanished/);
      return true;
    });
  }
  assert.deepEqual(await exited, { code: 7, signal: null });
  await assert.rejects(client.call("echo"), CkptConnectionError);
});

test("a missing binary rejects calls with a clear error", async (t) => {
  const client = start(t, { binary: "/nonexistent/ckpt" });
  await assert.rejects(client.call("echo"), (err) => err instanceof CkptConnectionError && /cannot run ckpt serve.*ENOENT/.test(err.message));
});

test("close ends stdin, rejects pending calls and lets the server exit", async (t) => {
  const client = start(t);
  const pending = client.call("block");
  const settled = assert.rejects(pending, (err) => err instanceof CkptConnectionError && /closed/.test(err.message));
  const info = await client.close();
  assert.deepEqual(info, { code: 0, signal: null });
  await settled;
  await assert.rejects(client.call("echo"), CkptConnectionError);
  assert.deepEqual(await client.close(), info, "close is idempotent");
});

test("close sends SIGTERM to a server that outlives the grace", async (t) => {
  const client = start(t, { args: ["--linger"], closeGraceMs: 100 });
  await client.call("echo");
  assert.deepEqual(await client.close(), { code: null, signal: "SIGTERM" });
});
