// Times a save through a client attached to the store's server against one
// through a client whose `ckpt serve` owns the store: the same workspace,
// one file changed before each save, the median of N saves each.
//
//	npm run build && node bench/attached-save.mjs [ckpt-binary] [files=2000] [saves=30]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CkptClient, CkptSharedClient } from "../dist/index.js";

const [binary = "ckpt", files = "2000", saves = "30"] = process.argv.slice(2);

function workspace() {
  const ws = mkdtempSync(join(tmpdir(), "ckpt-bench-ws-"));
  mkdirSync(join(ws, "src"));
  for (let i = 0; i < Number(files); i++) writeFileSync(join(ws, "src", `f${i}.txt`), `file ${i}\n`.repeat(40));
  return ws;
}

/** median of the save times of a client, after a first (untimed) save. */
async function timeSaves(client, ws) {
  await client.save({ message: "warm" });
  const ms = [];
  for (let i = 0; i < Number(saves); i++) {
    writeFileSync(join(ws, "src", "f0.txt"), `edit ${i}\n`);
    const t = performance.now();
    await client.save({ message: `edit ${i}` });
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return ms[ms.length >> 1];
}

const results = {};
for (const mode of ["owner (stdio serve holds the store)", "attached (shared client on the store's server)", "attached (stdio serve relayed to the server)"]) {
  const ws = workspace();
  const store = mkdtempSync(join(tmpdir(), "ckpt-bench-store-"));
  let client;
  let server;
  if (mode.startsWith("owner")) {
    client = CkptClient.start({ binary, workspace: ws, store });
  } else {
    server = CkptSharedClient.connect({ binary, workspace: ws, store, serverIdle: "2s" });
    await server.list(); // the server runs from here on
    client = mode.includes("relayed") ? CkptClient.start({ binary, workspace: ws, store }) : server;
  }
  results[mode] = await timeSaves(client, ws);
  await client.close();
  if (server && server !== client) await server.close();
  rmSync(ws, { recursive: true, force: true });
  rmSync(store, { recursive: true, force: true });
}
for (const [mode, ms] of Object.entries(results)) console.log(`${ms.toFixed(1).padStart(8)} ms  median save, ${mode}`);
