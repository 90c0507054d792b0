// CkptCalls: the typed methods and events every ckpt client offers, over
// whatever carries its JSON-RPC calls.

import { EventEmitter } from "node:events";
import type { CallOptions, Notification } from "./rpc.js";
import type * as T from "./types.js";

type Listener<K extends keyof T.CkptEvents> = (event: T.CkptEvents[K]) => void;

/**
 * CkptCalls is a ckpt client's surface: `call` and one typed wrapper per
 * method, and the server's notifications as events named after their method
 * (`checkpoint`, `restore`, `initialize`, `error`, or any other). A
 * notification is emitted only when a listener is registered for it, so an
 * unheard `error` can never throw and nothing else sees the others.
 */
export abstract class CkptCalls extends EventEmitter {
  /**
   * call invokes a method. It resolves with the result, rejects with a typed
   * CkptError when the server answers with an error, with the signal's
   * reason when aborted (and `$/cancelRequest` is sent), or with a
   * CkptConnectionError when the server is gone.
   */
  abstract call<R>(method: string, params?: object, opts?: CallOptions): Promise<R>;

  /** notify emits a server notification to the listeners of its method, if any. */
  protected notify(n: Notification): void {
    if (this.listenerCount(n.method) === 0) return;
    this.emit(n.method, n.params);
  }

  override on<K extends keyof T.CkptEvents>(event: K, listener: Listener<K>): this;
  override on(event: string, listener: (params: any) => void): this;
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
  /** log lists the checkpoints in which paths changed, newest first. */
  log(p: T.LogParams = {}, o?: CallOptions) { return this.call<T.LogResult>("log", p, o); }
  /** export writes a checkpoint's files into another directory; the workspace and head stay. */
  export(p: T.ExportParams, o?: CallOptions) { return this.call<T.ExportResult>("export", p, o); }
  /** bisect finds the first checkpoint at which a command fails, testing exported copies. */
  bisect(p: T.BisectParams, o?: CallOptions) { return this.call<T.BisectResult>("bisect", p, o); }
}
