// Locating the ckpt executable.

import { accessSync, constants, statSync } from "node:fs";
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
  /** The package's root, holding bin/<platform>-<arch>/. */
  packageDir?: string;
}

/** The package root: dist/binary.js lives one level below it. */
const defaultPackageDir = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * findBinary returns the ckpt executable to run: the explicit `binary`, else
 * $CKPT_BINARY, else the one shipped in this package's
 * bin/<platform>-<arch>/ckpt[.exe], else the first `ckpt` on PATH. It throws
 * when there is none, naming the places it looked.
 */
export function findBinary(opts: FindBinaryOptions = {}): string {
  if (opts.binary) return opts.binary;
  const env = opts.env ?? process.env;
  if (env.CKPT_BINARY) return env.CKPT_BINARY;
  const platform = opts.platform ?? process.platform;
  const arch = opts.arch ?? process.arch;
  const exe = platform === "win32" ? "ckpt.exe" : "ckpt";
  const shipped = join(opts.packageDir ?? defaultPackageDir, "bin", `${platform}-${arch}`, exe);
  if (isExecutable(shipped, platform)) return shipped;
  const pathVar = env.PATH ?? env.Path ?? "";
  const sep = platform === "win32" ? ";" : delimiter;
  const exts = platform === "win32" ? (env.PATHEXT ?? ".EXE").split(";").filter(Boolean) : [""];
  for (const dir of pathVar.split(sep).filter(Boolean)) {
    for (const ext of exts) {
      const candidate = join(dir, platform === "win32" ? `ckpt${ext.toLowerCase()}` : "ckpt");
      if (isExecutable(candidate, platform)) return candidate;
    }
  }
  throw new Error(
    `ckpt binary not found: pass {binary}, set CKPT_BINARY, ship ${shipped}, or put ckpt on PATH`,
  );
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
