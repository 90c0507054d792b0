// Locating the ckpt executable.

import { accessSync, constants, statSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Where findBinary looks; every field defaults to this process's. */
export interface FindBinaryOptions {
  /** An explicit path: used as is when given. */
  binary?: string;
  /** The environment (CKPT_BINARY, PATH, PATHEXT). */
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  arch?: string;
  /** The directory the platform package is resolved from, as Node resolves packages: this package's root. */
  packageDir?: string;
}

/** The package root: dist/binary.js lives one level below it. */
const defaultPackageDir = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * findBinary returns the ckpt executable to run: the explicit `binary`, else
 * $CKPT_BINARY, else bin/ckpt[.exe] of the platform package npm installed
 * beside this one (@ckpt/client-<platform>-<arch>, an optional dependency),
 * else the first `ckpt` on PATH. It throws when there is none, naming the
 * places it looked.
 */
export function findBinary(opts: FindBinaryOptions = {}): string {
  if (opts.binary) return opts.binary;
  const env = opts.env ?? process.env;
  if (env.CKPT_BINARY) return env.CKPT_BINARY;
  const platform = opts.platform ?? process.platform;
  const arch = opts.arch ?? process.arch;
  const exe = platform === "win32" ? "ckpt.exe" : "ckpt";
  const pkg = `@ckpt/client-${platform}-${arch}`;
  const shipped = platformBinary(opts.packageDir ?? defaultPackageDir, pkg, exe);
  if (shipped !== undefined && isExecutable(shipped, platform)) return shipped;
  const pathVar = env.PATH ?? env.Path ?? "";
  const sep = platform === "win32" ? ";" : delimiter;
  const exts = platform === "win32" ? (env.PATHEXT ?? ".EXE").split(";").filter(Boolean) : [""];
  for (const dir of pathVar.split(sep).filter(Boolean)) {
    for (const ext of exts) {
      const candidate = join(dir, platform === "win32" ? `ckpt${ext.toLowerCase()}` : "ckpt");
      if (isExecutable(candidate, platform)) return candidate;
    }
  }
  throw new Error(`ckpt binary not found: pass {binary}, set CKPT_BINARY, install ${pkg}, or put ckpt on PATH`);
}

/** platformBinary is the binary of package pkg as resolved from dir, or undefined when it is not installed. */
function platformBinary(dir: string, pkg: string, exe: string): string | undefined {
  try {
    const manifest = createRequire(join(dir, "package.json")).resolve(`${pkg}/package.json`);
    return join(dirname(manifest), "bin", exe);
  } catch {
    return undefined;
  }
}

function isExecutable(path: string, platform: NodeJS.Platform): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    if (platform !== "win32") accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
