// A shared client whose server breaks the protocol (an error about a
// request it could not read) drops that connection and reconnects on the
// next call, rather than failing every later call on the broken one.
import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CkptConnectionError, CkptSharedClient } from "../dist/index.js";

test("a connection the server broke is replaced on the next call", { skip: process.platform === "win32" && "the endpoint is a named pipe there", timeout: 20_000 }, async (t) => {
  const store = mkdtempSync(join(tmpdir(), "ckpt-fake-store-"));
  t.after(() => rmSync(store, { recursive: true, force: true }));
  let connections = 0;
  let broke = false;
  // A fake store server: it attaches anyone, answers the first call with
  // an error of a null id (a request it could not read), then answers.
  const server = net.createServer((socket) => {
    connections++;
    let buffered = "";
    socket.on("data", (chunk) => {
      buffered += chunk;
      for (let nl; (nl = buffered.indexOf("\n")) >= 0; buffered = buffered.slice(nl + 1)) {
        const m = JSON.parse(buffered.slice(0, nl));
        let reply = { jsonrpc: "2.0", id: m.id, result: m.method === "attach" ? { workspace: "/w", store, profile: "default", pid: 1 } : "ok" };
        if (m.method !== "attach" && !broke) {
          broke = true;
          reply = { jsonrpc: "2.0", id: null, error: { code: -32600, message: "invalid request: message exceeds the limit" } };
        }
        socket.write(JSON.stringify(reply) + "\n");
      }
    });
  });
  server.listen(join(store, "serve.sock"));
  await once(server, "listening");
  t.after(() => server.close());
  const client = CkptSharedClient.connect({ workspace: "/w", store, lingerMs: 60_000 });
  t.after(() => client.close());
  await assert.rejects(client.call("list"), (e) => e instanceof CkptConnectionError && e.message.includes("could not read a request"));
  assert.equal(await client.call("list"), "ok", "the next call gets a new connection");
  assert.equal(connections, 2);
});
