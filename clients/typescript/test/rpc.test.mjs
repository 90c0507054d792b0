import { test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { CkptConnectionError, CkptUsageError, RpcConnection, maxRequestBytes } from "../dist/index.js";

/** pair connects an RpcConnection to streams the test drives as the server. */
function pair() {
  const toClient = new PassThrough();
  const toServer = new PassThrough();
  toServer.setEncoding("utf8");
  const notes = [];
  const rpc = new RpcConnection(toClient, toServer, (n) => notes.push(n));
  const lines = [];
  const waiters = [];
  let buffered = "";
  toServer.on("data", (chunk) => {
    buffered += chunk;
    for (let nl; (nl = buffered.indexOf("\n")) >= 0; buffered = buffered.slice(nl + 1)) {
      lines.push(JSON.parse(buffered.slice(0, nl)));
    }
    while (waiters.length && lines.length) waiters.shift()(lines.shift());
  });
  const next = () => (lines.length ? Promise.resolve(lines.shift()) : new Promise((resolve) => waiters.push(resolve)));
  const reply = (msg) => toClient.write(JSON.stringify(msg) + "\n");
  return { rpc, next, reply, toClient, notes };
}

test("replies in a batch array, split across writes, settle their calls", async () => {
  const { rpc, next, toClient } = pair();
  const a = rpc.call("a", { x: 1 });
  const b = rpc.call("b");
  const [ra, rb] = [await next(), await next()];
  assert.deepEqual(ra, { jsonrpc: "2.0", id: 1, method: "a", params: { x: 1 } });
  assert.deepEqual(rb, { jsonrpc: "2.0", id: 2, method: "b" });
  const line = JSON.stringify([{ jsonrpc: "2.0", id: 2, result: "B" }, { jsonrpc: "2.0", id: 1, result: "A" }]) + "\n";
  toClient.write(line.slice(0, 10));
  toClient.write(line.slice(10));
  assert.deepEqual(await Promise.all([a, b]), ["A", "B"]);
  assert.equal(rpc.pending, 0);
});

test("notifications go to the handler; replies to no call are ignored", async () => {
  const { rpc, next, reply, notes } = pair();
  const call = rpc.call("m");
  await next();
  reply({ jsonrpc: "2.0", id: 99, result: "stray" });
  reply({ jsonrpc: "2.0", method: "restore", params: { commitHash: "c" } });
  reply({ jsonrpc: "2.0", id: 1, result: "ok" });
  assert.equal(await call, "ok");
  assert.deepEqual(notes, [{ method: "restore", params: { commitHash: "c" } }]);
});

test("an error with a null id (a request the server could not read) fails the calls instead of leaving them waiting", { timeout: 10_000 }, async () => {
  const { rpc, next, reply } = pair();
  const call = rpc.call("m");
  await next();
  reply({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "invalid request: message exceeds the limit" } });
  await assert.rejects(call, (e) => e instanceof CkptConnectionError && e.message.includes("could not read a request: invalid request"));
});

test("a request larger than the server reads is refused before it is sent", async () => {
  const { rpc, next } = pair();
  await assert.rejects(rpc.call("save", { state: "s".repeat(maxRequestBytes) }), (e) => e instanceof CkptUsageError && e.message.includes("more than"));
  assert.equal(rpc.pending, 0);
  const small = rpc.call("list");
  assert.equal((await next()).method, "list", "nothing of the refused request went out, and the connection goes on");
  rpc.fail(new Error("done"));
  await assert.rejects(small);
});

test("a reply that arrives in many chunks, with the next one's start, is read whole", async () => {
  const { rpc, next, toClient } = pair();
  const a = rpc.call("a");
  const b = rpc.call("b");
  await next();
  await next();
  const big = "x".repeat(200_000);
  const text = JSON.stringify({ jsonrpc: "2.0", id: 1, result: big }) + "\n" + JSON.stringify({ jsonrpc: "2.0", id: 2, result: "B" }) + "\n";
  for (let i = 0; i < text.length; i += 4096) toClient.write(text.slice(i, i + 4096));
  assert.deepEqual(await Promise.all([a, b]), [big, "B"]);
});

test("the end of input or a line that is not JSON fails every call", async () => {
  for (const breakIt of [(p) => p.toClient.end(), (p) => p.toClient.write("<html>\n")]) {
    const p = pair();
    const call = p.rpc.call("m");
    await p.next();
    breakIt(p);
    await assert.rejects(call, CkptConnectionError);
    await assert.rejects(p.rpc.call("later"), CkptConnectionError);
  }
});

test("the reasons a connection breaks name its peer", async () => {
  const toClient = new PassThrough();
  const rpc = new RpcConnection(toClient, new PassThrough(), () => {}, undefined, "the store's server");
  const call = rpc.call("save");
  toClient.end();
  await assert.rejects(call, (e) => e instanceof CkptConnectionError && e.message === "the store's server closed its output");
});
