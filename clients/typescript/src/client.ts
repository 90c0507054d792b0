// CkptClient: a `ckpt serve` child process and the JSON-RPC connection to it.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { EventEmitter } from "node:events";
import { findBinary } from "./binary.js";
import { CkptConnectionError } from "./errors.js";
import { RpcConnection, type CallOptions, type Notification } from "./rpc.js";
import type * as T from "./types.js";

/** How to start `ckpt serve`. */
export interface StartOptions {
  /** The workspace directory (-C). */
  workspace: string;
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

type Listener<K extends keyof T.CkptEvents> = (event: T.CkptEvents[K]) => void;

/**
 * CkptClient runs `ckpt serve` for one workspace and calls it. Calls may run
 * concurrently. Server notifications are emitted as events named after their
 * method (`checkpoint`, `restore`, `initialize`, `error`, or any other); an
 * `error` notification is emitted only when a listener is registered, so it
 * can never throw. When the child exits, every pending call rejects with a
 * CkptConnectionError carrying its exit code and the end of its stderr, and
 * `exit` is emitted with an ExitInfo.
 */
export class CkptClient extends EventEmitter {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #rpc: RpcConnection;
  readonly #grace: number;
  readonly #exited: Promise<ExitInfo>;
  #stderr = "";
  #closing = false;

  private constructor(child: ChildProcessWithoutNullStreams, grace: number) {
    super();
    this.#child = child;
    this.#grace = grace;
    // A broken pipe is answered by the "close" handler, which knows the exit status.
    this.#rpc = new RpcConnection(child.stdout, child.stdin, (n) => this.#notify(n), () => {});
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
        this.#rpc.fail(
          new CkptConnectionError(`${why} before answering${tail ? `: ${tail}` : ""}`, { code, signal, stderr: this.#stderr }),
        );
        const info = { code, signal };
        this.emit("exit", info);
        resolve(info);
      });
    });
  }

  /**
   * start spawns `ckpt serve -C workspace [--store S] [--task T] [args...]`.
   * It throws when no binary is found; a binary that cannot be run makes
   * every call reject with a CkptConnectionError.
   */
  static start(opts: StartOptions): CkptClient {
    const binary = findBinary(opts.binary === undefined ? {} : { binary: opts.binary });
    const args = ["serve", "-C", opts.workspace];
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
    return this.#rpc.call<R>(method, params, opts);
  }

  /**
   * close ends the child cleanly: pending calls reject, stdin is closed so
   * the server finishes, then after the grace SIGTERM, and after another
   * grace SIGKILL. It resolves with how the child ended.
   */
  async close(): Promise<ExitInfo> {
    if (!this.#closing) {
      this.#closing = true;
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

  #notify(n: Notification): void {
    if (n.method === "error" && this.listenerCount("error") === 0) return;
    this.emit(n.method, n.params);
  }

  override on<K extends keyof T.CkptEvents>(event: K, listener: Listener<K>): this;
  override on(event: "exit", listener: (info: ExitInfo) => void): this;
  override on(event: string, listener: (params: unknown) => void): this;
  override on(event: string, listener: (...args: any[]) => void): this {
    return super.on(event, listener);
  }

  save(p: T.SaveParams = {}, o?: CallOptions<T.ProgressValue>) { return this.call<T.SaveResult>("save", p, o as CallOptions); }
  list(p: T.ListParams = {}, o?: CallOptions) { return this.call<T.ListResult>("list", p, o); }
  show(p: T.ShowParams, o?: CallOptions) { return this.call<T.ShowResult>("show", p, o); }
  ls(p: T.LsParams, o?: CallOptions) { return this.call<T.LsResult>("ls", p, o); }
  cat(p: T.CatParams, o?: CallOptions) { return this.call<T.CatResult>("cat", p, o); }
  diff(p: T.DiffParams = {}, o?: CallOptions<T.ProgressValue>) { return this.call<T.DiffResult>("diff", p, o as CallOptions); }
  restore(p: T.RestoreParams, o?: CallOptions<T.ProgressValue>) { return this.call<T.RestoreResult>("restore", p, o as CallOptions); }
  tasks(o?: CallOptions) { return this.call<T.TasksResult>("tasks", {}, o); }
  drop(p: T.DropParams, o?: CallOptions) { return this.call<T.DropResult>("drop", p, o); }
  gc(p: T.GcParams = {}, o?: CallOptions<T.ProgressValue>) { return this.call<T.GcResult>("gc", p, o as CallOptions); }
  verify(p: T.VerifyParams = {}, o?: CallOptions<T.ProgressValue>) { return this.call<T.VerifyResult>("verify", p, o as CallOptions); }
  stats(o?: CallOptions) { return this.call<T.StatsResult>("stats", {}, o); }
}
