// CkptClient: a `ckpt serve` child process and the JSON-RPC connection to it.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { findBinary } from "./binary.js";
import { CkptCalls } from "./calls.js";
import { CkptConnectionError, errorFromExit } from "./errors.js";
import { RpcConnection, type CallOptions } from "./rpc.js";
import { Holder } from "./hold.js";
import { workspaceArgs, type Workspace } from "./server.js";

/** How to start `ckpt serve`. */
export interface StartOptions {
  /** The workspace directory (-C), or the roots of a multi-root workspace (-C each). */
  workspace: Workspace;
  /** The store directory (--store); default: ckpt's own choice. */
  store?: string;
  /** The default task of calls that name none (--task). */
  task?: string;
  /** The ckpt executable; see findBinary for the search when absent. */
  binary?: string;
  /** Extra arguments after `serve`'s own. */
  args?: string[];
  /** The child's environment; default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** How long close() waits after closing stdin, and again after SIGTERM (ms, default 5000). */
  closeGraceMs?: number;
}

/** How the child process ended. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The most stderr kept for error messages. */
const stderrTail = 8 << 10;

/**
 * CkptClient runs `ckpt serve` on stdio for one workspace and calls it: the
 * child forwards to the store's server when one runs, and otherwise opens
 * the store and is its server while it runs, every later client attaching
 * to it (see CkptSharedClient for a client of that server without a child).
 * Calls may run concurrently; notifications are emitted as CkptCalls says.
 * When the child exits, every pending call rejects with a
 * CkptConnectionError carrying its exit code and the end of its stderr (a
 * CkptBusyError for exit code 3, the store locked by the process its
 * message names), and `exit` is emitted with an ExitInfo. Between calls the
 * child and its pipes do not keep Node running: a dropped client ends with
 * the process, whose exit closes the child's stdin.
 */
export class CkptClient extends CkptCalls {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #rpc: RpcConnection;
  readonly #grace: number;
  readonly #exited: Promise<ExitInfo>;
  readonly #hold: Holder;
  #stderr = "";
  #closing = false;

  private constructor(child: ChildProcessWithoutNullStreams, grace: number) {
    super();
    this.#child = child;
    this.#grace = grace;
    this.#hold = new Holder([child, child.stdin, child.stdout, child.stderr]);
    // A broken pipe is answered by the "close" handler, which knows the exit status.
    this.#rpc = new RpcConnection(child.stdout, child.stdin, (n) => this.notify(n), () => {});
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (s: string) => {
      this.#stderr = (this.#stderr + s).slice(-stderrTail);
    });
    this.#exited = new Promise((resolve) => {
      child.on("error", (err) => {
        this.#rpc.fail(new CkptConnectionError(`cannot run ckpt serve: ${err.message}`, { code: null, signal: null, stderr: "" }));
        resolve({ code: null, signal: null });
      });
      child.on("close", (code, signal) => {
        const why = this.#closing ? "the client was closed" : `ckpt serve exited (code ${code}, signal ${signal})`;
        const tail = this.#stderr.trim();
        const busy = code === 3 && !this.#closing ? errorFromExit(code, this.#stderr) : undefined;
        this.#rpc.fail(
          busy ?? new CkptConnectionError(`${why} before answering${tail ? `: ${tail}` : ""}`, { code, signal, stderr: this.#stderr }),
        );
        const info = { code, signal };
        this.emit("exit", info);
        resolve(info);
      });
    });
  }

  /**
   * start spawns `ckpt serve -C workspace... [--store S] [--task T] [args...]`.
   * It throws when no binary is found; a binary that cannot be run makes
   * every call reject with a CkptConnectionError.
   */
  static start(opts: StartOptions): CkptClient {
    const binary = findBinary(opts.binary === undefined ? {} : { binary: opts.binary });
    const args = ["serve", ...workspaceArgs(opts.workspace)];
    if (opts.store !== undefined) args.push("--store", opts.store);
    if (opts.task !== undefined) args.push("--task", opts.task);
    args.push(...(opts.args ?? []));
    const child = spawn(binary, args, { stdio: ["pipe", "pipe", "pipe"], env: opts.env ?? process.env, windowsHide: true });
    return new CkptClient(child, opts.closeGraceMs ?? 5000);
  }

  /** The child's process id. */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /**
   * call invokes a method. It resolves with the result, rejects with a typed
   * CkptError when the server answers with an error, with the signal's
   * reason when aborted (and `$/cancelRequest` is sent), or with a
   * CkptConnectionError when the server is gone.
   */
  call<R>(method: string, params?: object, opts?: CallOptions): Promise<R> {
    return this.#hold.during(this.#rpc.call<R>(method, params, opts));
  }

  /**
   * close ends the child cleanly: pending calls reject, stdin is closed so
   * the server finishes, then after the grace SIGTERM, and after another
   * grace SIGKILL. It resolves with how the child ended.
   */
  async close(): Promise<ExitInfo> {
    if (!this.#closing) {
      this.#closing = true;
      this.#hold.forever(); // until the child has exited
      this.#rpc.fail(new CkptConnectionError("the client was closed", { code: null, signal: null, stderr: "" }));
      this.#child.stdin.end();
      for (const signal of ["SIGTERM", "SIGKILL"] as const) {
        if (await this.#exitWithin(this.#grace)) break;
        this.#child.kill(signal);
      }
    }
    return this.#exited;
  }

  #exitWithin(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void this.#exited.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
