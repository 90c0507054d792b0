// The store's resident server (`ckpt serve --listen`): where it listens,
// and starting it when none does.

import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { CkptConnectionError, errorFromExit } from "./errors.js";
import type { NameBase64 } from "./types.js";

/**
 * A workspace: one directory, or the directories of a multi-root workspace
 * (one checkpoint over all of them, each root under its directory's base
 * name, made unique with -2, -3, ... in the order given).
 */
export type Workspace = string | readonly string[];

/** workspaceArgs is `-C DIR` for the workspace's directory, or for each root. */
export function workspaceArgs(w: Workspace): string[] {
  return (typeof w === "string" ? [w] : w).flatMap((dir) => ["-C", dir]);
}

/** workspaceParams names the workspace in `attach`: `workspace`, or `roots`. */
export function workspaceParams(w: Workspace): { workspace: string } | { roots: { dir: string }[] } {
  return typeof w === "string" ? { workspace: w } : { roots: w.map((dir) => ({ dir })) };
}

/** How to start the store's server when none answers. */
export interface ServerStart {
  /** The ckpt executable. */
  binary: string;
  /** The workspace directory, or the roots of a multi-root workspace (-C each). */
  workspace: Workspace;
  /** The store directory (--store); default: ckpt's own choice. */
  store?: string;
  /** The exclusion profile (--profile); default: ckpt's. */
  profile?: string;
  /** How long the server stays without a client before it exits (--idle, a Go duration). */
  idle: string;
  /** Extra arguments after `serve --listen`'s own. */
  args?: string[];
  /** The server's environment. */
  env?: NodeJS.ProcessEnv;
}

/** Where a server listens: the endpoint to connect to and its store. */
export interface Listening {
  listening: string;
  /** The endpoint's and the store's bytes, when their names are not valid UTF-8. */
  listening_base64?: NameBase64;
  store: string;
  store_base64?: NameBase64;
}

/**
 * endpointOf is the address net.connect reaches the server of store at:
 * the socket DIR/serve.sock, or on Windows the named pipe whose name the
 * file DIR/serve.pipe holds. It rejects (ENOENT) when there is none.
 */
export async function endpointOf(store: string, platform: NodeJS.Platform = process.platform): Promise<string> {
  if (platform !== "win32") return join(store, "serve.sock");
  return (await readFile(join(store, "serve.pipe"), "utf8")).trim();
}

/** dial connects to an endpoint; it rejects when nobody listens there. */
export function dial(endpoint: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(endpoint);
    socket.once("connect", () => {
      socket.removeListener("error", reject);
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

/** The most stderr kept for an error message. */
const stderrTail = 8 << 10;

/**
 * startServer runs `ckpt serve --listen --idle I --json` for the store,
 * detached (its own session, no console window, not waited for), and
 * resolves with where it listens once it says so. Racing clients are safe:
 * a server that finds another already listening for the store, or that
 * appears while it waits for the store's lock, prints that one's endpoint
 * and exits. It rejects with the typed error of ckpt's exit code when the
 * server cannot start (CkptBusyError, naming the holder, when another
 * process kept the store locked), or a CkptConnectionError when ckpt
 * cannot be run.
 */
export function startServer(s: ServerStart): Promise<Listening> {
  const args = ["serve", "--listen", "--idle", s.idle, "--json", ...workspaceArgs(s.workspace)];
  if (s.store !== undefined) args.push("--store", s.store);
  if (s.profile !== undefined) args.push("--profile", s.profile);
  args.push(...(s.args ?? []));
  const child = spawn(s.binary, args, {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: s.env ?? process.env,
    windowsHide: true,
  });
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      // The server outlives this client: its pipes are let go (it ignores
      // their closing) and it is not waited for.
      child.stdout.destroy();
      child.stderr.destroy();
      child.unref();
      fn();
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      out += chunk;
      const nl = out.indexOf("\n");
      if (nl < 0) return;
      const line = out.slice(0, nl);
      settle(() => {
        try {
          const l = JSON.parse(line) as Listening & { error?: { code: number; message: string } };
          // With --json, a server that cannot start says why on stdout, then exits with the code.
          if (l.error) {
            reject(errorFromExit(l.error.code, l.error.message) ??
              new CkptConnectionError(`ckpt serve --listen failed: ${l.error.message}`, { code: l.error.code, signal: null, stderr: err }));
            return;
          }
          if (typeof l.listening !== "string" || typeof l.store !== "string") throw new Error("no endpoint");
          // On Windows the endpoint printed is the file naming the pipe.
          resolve(process.platform === "win32" ? endpointOf(l.store).then((listening) => ({ ...l, listening })) : l);
        } catch {
          reject(new CkptConnectionError(`ckpt serve --listen printed ${JSON.stringify(line.slice(0, 200))}, not its endpoint`,
            { code: null, signal: null, stderr: err }));
        }
      });
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      err = (err + chunk).slice(-stderrTail);
    });
    child.on("error", (e) =>
      settle(() => reject(new CkptConnectionError(`cannot run ckpt serve --listen: ${e.message}`, { code: null, signal: null, stderr: "" }))));
    child.on("close", (code, signal) =>
      settle(() => {
        const tail = err.trim();
        reject(errorFromExit(code, err) ??
          new CkptConnectionError(`ckpt serve --listen exited (code ${code}, signal ${signal}) before listening${tail ? `: ${tail}` : ""}`,
            { code, signal, stderr: err }));
      }));
  });
}
