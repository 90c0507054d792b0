#!/usr/bin/env node
// A stand-in for `ckpt serve` speaking JSON-RPC lines on stdio, for the
// client's transport tests. Flags after `serve ...`: --linger ignores the end
// of stdin (so close() must signal it).

import { createInterface } from "node:readline";

const linger = process.argv.includes("--linger");
if (linger) setInterval(() => {}, 1 << 30); // stays alive after stdin ends
const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
const blocked = new Map(); // id -> true, for "block"
const cancelled = [];
const gate = []; // pending "gate" ids
let gateSize = 0;

const methods = {
  argv: () => ({ argv: process.argv.slice(2) }),
  echo: (p) => p,
  gate: (p, id) => {
    gateSize = p.n;
    gate.push(id);
    if (gate.length === gateSize) {
      for (const g of gate.reverse()) send({ id: g, result: { id: g } });
      gate.length = 0;
    }
    return undefined; // answered when the gate fills
  },
  block: (_p, id) => {
    blocked.set(id, true);
    return undefined;
  },
  cancelled: () => ({ cancelled }),
  progress: (p) => {
    const token = p._meta?.progressToken;
    for (let i = 1; i <= 3; i++) send({ method: "$/progress", params: { token, value: { done: i, total: 3 } } });
    send({ method: "$/progress", params: { token: "someone-else", value: { done: 99 } } });
    return { steps: 3 };
  },
  fail: (p) => {
    throw p;
  },
  emit: (p) => {
    send({ method: p.method, params: p.params });
    return true;
  },
  die: (p) => {
    process.stderr.write("fatal: store vanished\n");
    process.exit(p.code);
  },
};

const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.method === "$/cancelRequest") {
    const id = msg.params.id;
    cancelled.push(id);
    if (blocked.delete(id)) send({ id, error: { code: -32800, message: "request cancelled" } });
    return;
  }
  const fn = methods[msg.method];
  if (!fn) return send({ id: msg.id, error: { code: -32601, message: `method not found: "${msg.method}"` } });
  try {
    const result = fn(msg.params ?? {}, msg.id);
    if (result !== undefined) send({ id: msg.id, result });
  } catch (err) {
    send({ id: msg.id, error: err });
  }
});
rl.on("close", () => {
  if (!linger) process.exit(0);
});
