// The npm packages as a host installs them: scripts/release stages
// @ckpt/client and this machine's @ckpt/client-<platform>-<arch>, npm packs
// both, and a scratch project installs the tarballs and saves a checkpoint
// through the installed client, which finds the binary in the platform
// package by itself.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const repo = fileURLToPath(new URL("../../..", import.meta.url));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const goos = { win32: "windows" }[process.platform] ?? process.platform;
const goarch = { x64: "amd64" }[process.arch] ?? process.arch;

test("the packed client and platform package install into a project and save", async (t) => {
  const root = mkdtempSync(join(tmpdir(), "ckpt-pkg-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const out = join(root, "npm");
  await run("sh", [join(repo, "scripts", "release")], { cwd: repo, env: { ...process.env, OUT: out, TARGETS: `${goos}/${goarch}` } });
  const platformDir = `client-${process.platform}-${process.arch}`;
  assert.deepEqual(readdirSync(out).sort(), ["SHA256SUMS", "client", platformDir].sort());
  for (const dir of ["client", platformDir]) {
    await run(npm, ["pack", "--silent", "--pack-destination", root], { cwd: join(out, dir), shell: process.platform === "win32" });
  }
  const tarballs = readdirSync(root).filter((f) => f.endsWith(".tgz")).map((f) => join(root, f));
  assert.equal(tarballs.length, 2);

  const project = join(root, "project");
  const ws = join(root, "ws");
  const store = join(root, "store");
  for (const d of [project, ws]) mkdirSync(d);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "scratch", version: "1.0.0", type: "module", private: true }));
  // --offline: the other platforms' packages are optional and not published here; npm skips them.
  await run(npm, ["install", "--offline", "--no-audit", "--no-fund", ...tarballs], { cwd: project, shell: process.platform === "win32" });
  writeFileSync(join(ws, "a.txt"), "hello\n");
  writeFileSync(join(project, "save.mjs"), `import { findBinary, CheckpointTracker } from "@ckpt/client";
const t = await CheckpointTracker.create("installed", true, process.argv[2], { store: process.argv[3], serverIdle: "2s" });
console.log(JSON.stringify({ binary: findBinary(), id: await t.commit() }));
`);
  const env = { ...process.env };
  delete env.CKPT_BINARY;
  env.PATH = ""; // the binary must come from the platform package
  const { stdout } = await run(process.execPath, ["save.mjs", ws, store], { cwd: project, env });
  const res = JSON.parse(stdout);
  assert.equal(res.binary, join(project, "node_modules", "@ckpt", platformDir, "bin", process.platform === "win32" ? "ckpt.exe" : "ckpt"));
  assert.match(res.id, /^[0-9a-f]{64}$/);
});
