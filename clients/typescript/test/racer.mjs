// One client of a race (see shared-store.test.mjs): a CkptSharedClient of
// its own task on a store that may have no server yet. It waits for "go" on
// stdin, so that every racer starts at once, then saves its file once per
// round (pausing a random few milliseconds between rounds, so that its
// calls meet servers starting and stopping at random moments), restores
// the first version of the file and prints one JSON line: the pid of the
// server it attached to last, what it read back, its task's checkpoints and
// its saves; or the error's class and message.
import { createInterface } from "node:readline";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CkptSharedClient } from "../dist/index.js";

const [ws, store, binary, name, idle, rounds, lingerMs] = process.argv.slice(2);
const file = `${name}.txt`;
const rl = createInterface({ input: process.stdin });
await once(rl, "line");
rl.close();
try {
  const client = CkptSharedClient.connect({ workspace: ws, store, binary, task: name, serverIdle: idle, lingerMs: Number(lingerMs) });
  const saved = [];
  for (let i = 0; i < Number(rounds); i++) {
    if (i > 0) await sleep(Math.random() * 40);
    writeFileSync(join(ws, file), `${name} ${i}\n`);
    saved.push((await client.save({ message: `${i}` })).id);
  }
  await client.restore({ ref: saved[0], paths: [file] });
  const list = await client.list();
  const { pid } = await client.attach();
  process.stdout.write(JSON.stringify({ pid, read: readFileSync(join(ws, file), "utf8"), ids: list.checkpoints.map((c) => c.id), saved }) + "\n");
} catch (e) {
  process.stdout.write(JSON.stringify({ error: `${e?.constructor?.name}: ${e?.message}` }) + "\n");
}
