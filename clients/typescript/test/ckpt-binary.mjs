// The ckpt binary the integration tests run: built from this repository
// into a temporary directory, so they always test the current source; the
// directory goes when the test process exits.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../../..", import.meta.url));

/** buildCkpt builds ./cmd/ckpt with the Go toolchain and returns the binary's path. */
export function buildCkpt() {
  const dir = mkdtempSync(join(tmpdir(), "ckpt-bin-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  const binary = join(dir, process.platform === "win32" ? "ckpt.exe" : "ckpt");
  execFileSync("go", ["build", "-o", binary, "./cmd/ckpt"], { cwd: repo, stdio: "inherit" });
  return binary;
}
