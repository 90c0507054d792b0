// A JSON-RPC 2.0 client over a pair of streams, one JSON document per line.

import type { Readable, Writable } from "node:stream";
import { CkptConnectionError, CkptUsageError, ExitCode, RpcCode, errorFromRpc, type RpcErrorObject } from "./errors.js";

/**
 * maxRequestBytes is the largest request line ckpt serve reads (its
 * jsonrpc.Options.MaxMessageBytes default); a larger call is rejected here
 * before it is sent, with a CkptUsageError, since the server could not say
 * which call it refused.
 */
export const maxRequestBytes = 64 << 20;

/** Options of one call. */
export interface CallOptions<P = unknown> {
  /** Aborting it rejects the call with the signal's reason and asks the server to cancel it. */
  signal?: AbortSignal;
  /** Called with each `$/progress` value the server sends for this call. */
  onProgress?: (value: P) => void;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  cleanup: () => void;
}

/** A message received without an id: a server notification. */
export interface Notification {
  method: string;
  params: unknown;
}

/**
 * RpcConnection sends requests on `output` and matches the replies read from
 * `input`. Notifications other than `$/progress` go to `onNotification`.
 * Once `fail` is called every pending call and every later call rejects with
 * that error. When the input ends or the output fails, `onBroken` is called
 * with the reason if given (an owner that knows more, e.g. a process's exit
 * status, then calls `fail`); otherwise the connection fails with it at once.
 * When the peer sends what breaks the protocol (a line that is not JSON, an
 * error about a request it could not read) the connection fails at once,
 * and `onBroken` hears of it too, so that an owner that reconnects does.
 * `peer` names the other end in those reasons (default: ckpt serve).
 */
export class RpcConnection {
  #nextId = 1;
  #pending = new Map<number, Pending>();
  #progress = new Map<string, (value: unknown) => void>();
  #failure: Error | undefined;
  /** The received text after the last newline, in the chunks it came in. */
  #partial: string[] = [];
  readonly #onBroken: (reason: Error) => void;

  constructor(
    input: Readable,
    private readonly output: Writable,
    private readonly onNotification: (n: Notification) => void,
    onBroken: (reason: Error) => void = (reason) => this.fail(reason),
    private readonly peer = "ckpt serve",
  ) {
    this.#onBroken = onBroken;
    const broken = (message: string) => onBroken(new CkptConnectionError(message, { code: null, signal: null, stderr: "" }));
    input.setEncoding("utf8");
    input.on("data", (chunk: string) => this.#receive(chunk));
    input.on("end", () => broken(`${peer} closed its output`));
    output.on("error", (err: Error) => broken(`cannot write to ${peer}: ${err.message}`));
  }

  /** The number of calls awaiting a reply. */
  get pending(): number {
    return this.#pending.size;
  }

  /** call sends a request and resolves with its result or rejects with a typed error. */
  call<R>(method: string, params?: object, opts: CallOptions = {}): Promise<R> {
    if (this.#failure) return Promise.reject(this.#failure);
    const { signal, onProgress } = opts;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = this.#nextId++;
    let sent: object | undefined = params;
    const token = `ckpt-${id}`;
    if (onProgress) {
      const p = (params ?? {}) as Record<string, unknown>;
      const meta = typeof p._meta === "object" && p._meta !== null ? p._meta : {};
      sent = { ...p, _meta: { ...meta, progressToken: token } };
      this.#progress.set(token, onProgress as (v: unknown) => void);
    }
    return new Promise<R>((resolve, reject) => {
      const onAbort = () => {
        const pending = this.#pending.get(id);
        if (!pending) return;
        this.#settle(id);
        this.#write({ jsonrpc: "2.0", method: "$/cancelRequest", params: { id } });
        reject(signal!.reason);
      };
      const cleanup = () => {
        signal?.removeEventListener("abort", onAbort);
        this.#progress.delete(token);
      };
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject, cleanup });
      signal?.addEventListener("abort", onAbort, { once: true });
      const req: Record<string, unknown> = { jsonrpc: "2.0", id, method };
      if (sent !== undefined) req.params = sent;
      const line = JSON.stringify(req) + "\n";
      const size = Buffer.byteLength(line) - 1; // the server's limit leaves out the newline
      if (size > maxRequestBytes) {
        this.#settle(id);
        reject(new CkptUsageError({ code: RpcCode.InvalidParams, message: `the ${method} request is ${size} bytes, more than the ${maxRequestBytes} ckpt serve reads`, data: { exit_code: ExitCode.Usage, kind: "usage" } }));
        return;
      }
      this.#writeLine(line);
    });
  }

  /** fail rejects every pending call with err; later calls reject with it too. */
  fail(err: Error): void {
    if (this.#failure) return;
    this.#failure = err;
    for (const [id, p] of [...this.#pending]) {
      this.#settle(id);
      p.reject(err);
    }
  }

  /** breaks fails the connection for what the peer sent, and tells the owner. */
  #breaks(message: string): void {
    const err = new CkptConnectionError(message, { code: null, signal: null, stderr: "" });
    this.fail(err);
    this.#onBroken(err);
  }

  #write(msg: object): void {
    this.#writeLine(JSON.stringify(msg) + "\n");
  }

  #writeLine(line: string): void {
    if (this.#failure) return;
    this.output.write(line);
  }

  /** settle forgets a pending call; it returns it, or undefined when already settled. */
  #settle(id: number): Pending | undefined {
    const p = this.#pending.get(id);
    if (p) {
      this.#pending.delete(id);
      p.cleanup();
    }
    return p;
  }

  /** receive looks for newlines in each chunk once, joining a line's chunks when it ends: linear in a reply's size. */
  #receive(chunk: string): void {
    let start = 0;
    let nl: number;
    while ((nl = chunk.indexOf("\n", start)) >= 0) {
      this.#partial.push(chunk.slice(start, nl));
      const line = this.#partial.join("").trim();
      this.#partial = [];
      start = nl + 1;
      if (line) this.#dispatch(line);
    }
    if (start < chunk.length) this.#partial.push(chunk.slice(start));
  }

  #dispatch(line: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.#breaks(`${this.peer} sent a line that is not JSON: ${line.slice(0, 200)}`);
      return;
    }
    for (const m of Array.isArray(msg) ? msg : [msg]) this.#handle(m as Record<string, unknown>);
  }

  #handle(m: Record<string, unknown>): void {
    if (typeof m.method === "string") {
      if (m.method === "$/progress") {
        const p = m.params as { token?: unknown; value?: unknown } | undefined;
        const cb = this.#progress.get(String(p?.token));
        cb?.(p?.value);
        return;
      }
      this.onNotification({ method: m.method, params: m.params });
      return;
    }
    if (m.id === null && m.error !== undefined) {
      // The server could not read a request of ours, and cannot say which:
      // no pending call may wait for ever on it.
      this.#breaks(`${this.peer} could not read a request: ${(m.error as RpcErrorObject).message}`);
      return;
    }
    if (typeof m.id !== "number") return; // a reply to no call of ours
    const p = this.#settle(m.id);
    if (!p) return; // answered after the call was aborted
    if (m.error !== undefined) p.reject(errorFromRpc(m.error as RpcErrorObject));
    else p.resolve(m.result);
  }
}
