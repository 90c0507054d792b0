import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findBinary } from "../dist/index.js";

/**
 * tree makes a project with this package and the linux-x64 platform
 * package installed side by side in node_modules, and a PATH dir with
 * another binary.
 */
function tree(t) {
  const root = mkdtempSync(join(tmpdir(), "ckpt-bin-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const pkg = join(root, "node_modules", "@ckpt", "client");
  const platformPkg = join(root, "node_modules", "@ckpt", "client-linux-x64");
  const shipped = join(platformPkg, "bin", "ckpt");
  const pathDir = join(root, "path");
  mkdirSync(pkg, { recursive: true });
  mkdirSync(join(platformPkg, "bin"), { recursive: true });
  writeFileSync(join(platformPkg, "package.json"), JSON.stringify({ name: "@ckpt/client-linux-x64", version: "0.0.0" }));
  mkdirSync(pathDir);
  for (const f of [shipped, join(pathDir, "ckpt")]) {
    writeFileSync(f, "#!/bin/sh\n");
    chmodSync(f, 0o755);
  }
  return { pkg, shipped, pathDir, onPath: join(pathDir, "ckpt") };
}

test("findBinary prefers explicit, then CKPT_BINARY, then the platform package, then PATH", (t) => {
  const { pkg, shipped, pathDir, onPath } = tree(t);
  const base = { platform: "linux", arch: "x64", packageDir: pkg };
  assert.equal(findBinary({ ...base, binary: "/x/ckpt", env: { CKPT_BINARY: "/y/ckpt", PATH: pathDir } }), "/x/ckpt");
  assert.equal(findBinary({ ...base, env: { CKPT_BINARY: "/y/ckpt", PATH: pathDir } }), "/y/ckpt");
  assert.equal(findBinary({ ...base, env: { PATH: pathDir } }), shipped);
  assert.equal(findBinary({ ...base, arch: "arm64", env: { PATH: `/nonexistent:${pathDir}` } }), onPath);
});

test("findBinary skips files that are not executable and says where it looked", (t) => {
  const { pkg, pathDir } = tree(t);
  chmodSync(join(pathDir, "ckpt"), 0o644);
  assert.throws(
    () => findBinary({ platform: "linux", arch: "arm64", packageDir: pkg, env: { PATH: pathDir } }),
    /ckpt binary not found: .*CKPT_BINARY.*@ckpt\/client-linux-arm64.*PATH/,
  );
});
