// Shared by the adapters: a diff side's bytes from the server's lossless
// JSON (text when valid UTF-8, else base64).

import type { FileDiff } from "../types.js";

/** The bytes of one side of a change; empty when the side does not exist. */
export function sideBytes(f: FileDiff, side: "before" | "after"): Buffer {
  const b64 = side === "before" ? f.before_base64 : f.after_base64;
  if (b64 !== undefined) return Buffer.from(b64, "base64");
  const text = side === "before" ? f.before : f.after;
  return Buffer.from(text ?? "", "utf8");
}
