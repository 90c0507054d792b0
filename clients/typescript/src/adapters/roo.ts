// ShadowCheckpointService: Roo Code's shadow-git checkpoint service
// (RepoPerTaskCheckpointService.create, initShadowGit, saveCheckpoint,
// restoreCheckpoint, getDiff; the events initialize, checkpoint, restore,
// error) on ckpt.

import { EventEmitter } from "node:events";
import { join } from "node:path";
import { CkptSharedClient, type ConnectOptions } from "../shared.js";
import { sideBytes } from "./content.js";
import { protectedFolder } from "./protected.js";

/** How a service reaches ckpt; the profile defaults to `roo`. */
export type CkptOptions = Omit<ConnectOptions, "workspace" | "task">;

/** Roo Code's CheckpointServiceOptions, and how to reach ckpt. */
export interface CheckpointServiceOptions extends CkptOptions {
  taskId: string;
  workspaceDir: string;
  /** Roo's global storage folder; checkpointsDir is named under it, as Roo names it. */
  shadowDir: string;
  log?: (message: string) => void;
}

/** A saved checkpoint, as Roo Code's CheckpointResult. */
export interface CheckpointResult {
  commit: string;
}

/** One changed file, as Roo Code's CheckpointDiff, plus its exact bytes. */
export interface CheckpointDiff {
  paths: { relative: string; absolute: string };
  content: { before: string; after: string; beforeBytes: Buffer; afterBytes: Buffer };
}

/** Roo Code's CheckpointEventMap. */
export interface CheckpointEventMap {
  initialize: { type: "initialize"; workspaceDir: string; baseHash: string; created: boolean; duration: number };
  checkpoint: { type: "checkpoint"; fromHash: string; toHash: string; duration: number; suppressMessage?: boolean };
  restore: { type: "restore"; commitHash: string; duration: number };
  error: { type: "error"; error: Error };
}

/**
 * ShadowCheckpointService keeps one task's checkpoints of a workspace, one
 * ckpt task per Roo task id, in the workspace's store shared with every
 * other service, CLI and host (see CkptSharedClient): a subtask's service
 * works while its parent's is alive, and one dropped without dispose()
 * leaks nothing. The store is ckpt's (the `store` option), not
 * checkpointsDir, which is kept as Roo names it. It emits Roo's events,
 * each with its `type`, and logs Roo's lines through `log`; `error` is
 * emitted only when a listener is registered, so it never throws.
 * isInitialized turns true only when initShadowGit succeeded; after a
 * failed one, initShadowGit can be called again.
 */
export class ShadowCheckpointService extends EventEmitter {
  readonly taskId: string;
  readonly checkpointsDir: string;
  readonly workspaceDir: string;
  protected readonly log: (message: string) => void;
  protected _checkpoints: string[] = [];
  protected _baseHash: string | undefined;
  readonly #ckpt: CkptOptions;
  #client: CkptSharedClient | undefined;
  #initializing = false;

  constructor(taskId: string, checkpointsDir: string, workspaceDir: string, log: (message: string) => void, ckpt: CkptOptions = {}) {
    super();
    const folder = protectedFolder(workspaceDir);
    if (folder) throw new Error(`Cannot use checkpoints in ${workspaceDir}`);
    this.taskId = taskId;
    this.checkpointsDir = checkpointsDir;
    this.workspaceDir = workspaceDir;
    this.log = log;
    this.#ckpt = ckpt;
  }

  /** The task's base checkpoint (its head when initialized), once initialized. */
  get baseHash(): string | undefined {
    return this._baseHash;
  }

  /** True once initShadowGit has succeeded. */
  get isInitialized(): boolean {
    return this.#client !== undefined;
  }

  /** The checkpoints saved since initialization, oldest first. */
  getCheckpoints(): string[] {
    return this._checkpoints.slice();
  }

  /**
   * initShadowGit attaches to the workspace's store (starting its server
   * if needed); a task without checkpoints gets an initial one (empty
   * allowed). The base hash is the task's head. It throws when already
   * initialized or initializing; after a failure nothing is kept and it
   * may be called again.
   */
  async initShadowGit(onInit?: () => void | Promise<void>): Promise<{ created: boolean; duration: number }> {
    const name = this.constructor.name;
    if (this.#client || this.#initializing) throw new Error("Shadow git repo already initialized");
    this.#initializing = true;
    const start = Date.now();
    const client = CkptSharedClient.connect({ profile: "roo", ...this.#ckpt, workspace: this.workspaceDir, task: this.taskId });
    let created: boolean;
    let baseHash: string;
    try {
      const info = await client.attach();
      const log = await client.list({ task: this.taskId });
      created = log.checkpoints.length === 0;
      if (created) {
        this.log(`[${name}#initShadowGit] creating checkpoints of task ${this.taskId} in ${info.store}`);
        baseHash = (await client.save({ task: this.taskId, message: "initial commit", allow_empty: true })).id;
      } else {
        this.log(`[${name}#initShadowGit] checkpoints of task ${this.taskId} already exist in ${info.store}`);
        baseHash = log.head;
      }
    } catch (e) {
      this.#initializing = false;
      await client.close();
      throw e;
    }
    const duration = Date.now() - start;
    this.log(`[${name}#initShadowGit] initialized shadow repo with base commit ${baseHash} in ${duration}ms`);
    this._baseHash = baseHash;
    this._checkpoints = [];
    this.#client = client;
    this.#initializing = false;
    await onInit?.();
    this.emit("initialize", { type: "initialize", workspaceDir: this.workspaceDir, baseHash, created, duration });
    return { created, duration };
  }

  /**
   * saveCheckpoint saves the workspace; it resolves with the new checkpoint,
   * or undefined when nothing changed and allowEmpty is unset.
   */
  async saveCheckpoint(message: string, options?: { allowEmpty?: boolean; suppressMessage?: boolean }): Promise<CheckpointResult | undefined> {
    const name = this.constructor.name;
    try {
      this.log(`[${name}#saveCheckpoint] starting checkpoint save (allowEmpty: ${options?.allowEmpty ?? false})`);
      const client = this.#ready();
      const start = Date.now();
      const res = await client.save({ task: this.taskId, message, allow_empty: options?.allowEmpty ?? false });
      const fromHash = this._checkpoints[this._checkpoints.length - 1] ?? this._baseHash!;
      const toHash = res.created ? res.id : fromHash;
      this._checkpoints.push(toHash);
      const duration = Date.now() - start;
      if (!res.created) {
        this.log(`[${name}#saveCheckpoint] found no changes to commit in ${duration}ms`);
        return undefined;
      }
      this.emit("checkpoint", { type: "checkpoint", fromHash, toHash, duration, suppressMessage: options?.suppressMessage ?? false });
      this.log(`[${name}#saveCheckpoint] checkpoint saved in ${duration}ms -> ${res.id}`);
      return { commit: res.id };
    } catch (e) {
      throw this.#failed("saveCheckpoint", "failed to create checkpoint", e);
    }
  }

  /**
   * restoreCheckpoint makes the workspace's files those of commitHash and
   * forgets the checkpoints after it (they stay in the store: restoring
   * one by hash redoes).
   */
  async restoreCheckpoint(commitHash: string): Promise<void> {
    const name = this.constructor.name;
    try {
      this.log(`[${name}#restoreCheckpoint] starting checkpoint restore`);
      const client = this.#ready();
      const start = Date.now();
      await client.restore({ task: this.taskId, ref: commitHash });
      const idx = this._checkpoints.indexOf(commitHash);
      if (idx !== -1) this._checkpoints = this._checkpoints.slice(0, idx + 1);
      const duration = Date.now() - start;
      this.emit("restore", { type: "restore", commitHash, duration });
      this.log(`[${name}#restoreCheckpoint] restored checkpoint ${commitHash} in ${duration}ms`);
    } catch (e) {
      throw this.#failed("restoreCheckpoint", "failed to restore checkpoint", e);
    }
  }

  /** getDiff lists the changes from `from` (default: the task's first checkpoint) to `to` (default: the workspace). */
  async getDiff({ from, to }: { from?: string; to?: string } = {}): Promise<CheckpointDiff[]> {
    const client = this.#ready();
    const lhs = from || "@1";
    this.log(`[${this.constructor.name}#getDiff] diffing ${to ? `${lhs}..${to}` : `${lhs}..HEAD`}`);
    const res = await client.diff({ task: this.taskId, from: lhs, to: to ?? "workspace" });
    return res.files.map((f) => {
      const beforeBytes = sideBytes(f, "before");
      const afterBytes = sideBytes(f, "after");
      return {
        paths: { relative: f.path, absolute: f.absolute },
        content: { before: beforeBytes.toString("utf8"), after: afterBytes.toString("utf8"), beforeBytes, afterBytes },
      };
    });
  }

  /** dispose closes the service's connection now instead of after its linger; optional. */
  async dispose(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    await client?.close();
  }

  override emit<K extends keyof CheckpointEventMap>(event: K, data: CheckpointEventMap[K]): boolean {
    return super.emit(event, data);
  }

  override on<K extends keyof CheckpointEventMap>(event: K, listener: (data: CheckpointEventMap[K]) => void): this {
    return super.on(event, listener);
  }

  override off<K extends keyof CheckpointEventMap>(event: K, listener: (data: CheckpointEventMap[K]) => void): this {
    return super.off(event, listener);
  }

  override once<K extends keyof CheckpointEventMap>(event: K, listener: (data: CheckpointEventMap[K]) => void): this {
    return super.once(event, listener);
  }

  #ready(): CkptSharedClient {
    if (!this.#client) throw new Error("Shadow git repo not initialized");
    return this.#client;
  }

  /** failed logs and emits a failed operation's error, and returns it to throw. */
  #failed(op: string, what: string, e: unknown): Error {
    const error = e instanceof Error ? e : new Error(String(e));
    this.log(`[${this.constructor.name}#${op}] ${what}: ${error.message}`);
    if (this.listenerCount("error") > 0) this.emit("error", { type: "error", error });
    return error;
  }
}

/**
 * RepoPerTaskCheckpointService is the service Roo Code constructs: create
 * names checkpointsDir under shadowDir as Roo does.
 */
export class RepoPerTaskCheckpointService extends ShadowCheckpointService {
  static create({ taskId, workspaceDir, shadowDir, log = console.log, ...ckpt }: CheckpointServiceOptions): RepoPerTaskCheckpointService {
    return new RepoPerTaskCheckpointService(taskId, join(shadowDir, "tasks", taskId, "checkpoints"), workspaceDir, log, ckpt);
  }
}
