// ShadowCheckpointService: the method shapes and event map of Roo Code's
// shadow-git checkpoint service (initShadowGit, saveCheckpoint,
// restoreCheckpoint, getDiff; initialize, checkpoint, restore, error) on ckpt.

import { EventEmitter } from "node:events";
import { CkptClient, type StartOptions } from "../client.js";
import type { CkptEvents } from "../types.js";
import { sideBytes } from "./content.js";

/** Roo Code's CheckpointServiceOptions, with how to reach ckpt. */
export interface CheckpointServiceOptions extends Omit<StartOptions, "task" | "workspace"> {
  taskId: string;
  workspaceDir: string;
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
 * ShadowCheckpointService keeps one task's checkpoints of a workspace in
 * ckpt. Its events are the server's, for this task only, with Roo Code's
 * `type` field; initialize is sent by initShadowGit.
 */
export class ShadowCheckpointService extends EventEmitter {
  readonly taskId: string;
  readonly workspaceDir: string;
  readonly #opts: CheckpointServiceOptions;
  #client: CkptClient | undefined;
  #baseHash: string | undefined;
  #checkpoints: string[] = [];
  #suppress = false;
  #initializing = false;

  constructor(opts: CheckpointServiceOptions) {
    super();
    this.taskId = opts.taskId;
    this.workspaceDir = opts.workspaceDir;
    this.#opts = opts;
  }

  /** The task's first checkpoint, once initialized. */
  get baseHash(): string | undefined {
    return this.#baseHash;
  }

  /** The checkpoints saved or kept since initialization, oldest first. */
  getCheckpoints(): string[] {
    return [...this.#checkpoints];
  }

  get isInitialized(): boolean {
    return this.#client !== undefined;
  }

  /**
   * initShadowGit starts ckpt for the task; a task without checkpoints gets
   * an initial one (empty allowed), which is the base hash.
   */
  async initShadowGit(onInit?: () => void | Promise<void>): Promise<{ created: boolean; duration: number }> {
    if (this.#client) throw new Error("the checkpoint service is already initialized");
    const start = Date.now();
    const { taskId, workspaceDir, log: _log, ...startOpts } = this.#opts;
    const client = CkptClient.start({ ...startOpts, workspace: workspaceDir, task: taskId });
    client.on("checkpoint", (e: CkptEvents["checkpoint"]) => {
      // The initial checkpoint is announced by initialize, as in Roo Code.
      if ((e.task !== undefined && e.task !== taskId) || this.#initializing) return;
      this.emit("checkpoint", { type: "checkpoint", fromHash: e.fromHash, toHash: e.toHash, duration: e.duration, suppressMessage: this.#suppress });
    });
    client.on("restore", (e: CkptEvents["restore"]) => {
      if (e.task !== undefined && e.task !== taskId) return;
      this.emit("restore", { type: "restore", commitHash: e.commitHash, duration: e.duration });
    });
    client.on("error", (e: CkptEvents["error"]) => {
      if (e.task !== undefined && e.task !== taskId) return;
      this.#emitError(new Error(e.error));
    });
    this.#client = client;
    let log = await client.list({ task: taskId });
    const created = log.checkpoints.length === 0;
    if (created) {
      this.#initializing = true;
      try {
        await client.save({ task: taskId, message: "initial commit", allow_empty: true });
      } finally {
        this.#initializing = false;
      }
      log = await client.list({ task: taskId });
    }
    this.#baseHash = log.checkpoints[0]!.id;
    this.#checkpoints = log.checkpoints.slice(1).map((c) => c.id);
    await onInit?.();
    const duration = Date.now() - start;
    this.emit("initialize", { type: "initialize", workspaceDir, baseHash: this.#baseHash, created, duration });
    return { created, duration };
  }

  /**
   * saveCheckpoint saves the workspace; it resolves with the new checkpoint,
   * or undefined when nothing changed and allowEmpty is unset.
   */
  async saveCheckpoint(
    message: string,
    options?: { allowEmpty?: boolean; suppressMessage?: boolean },
  ): Promise<CheckpointResult | undefined> {
    const client = this.#ready();
    this.#suppress = options?.suppressMessage ?? false;
    try {
      const res = await client.save({ task: this.taskId, message, allow_empty: options?.allowEmpty ?? false });
      if (!res.created) return undefined;
      this.#checkpoints.push(res.id);
      return { commit: res.id };
    } finally {
      this.#suppress = false;
    }
  }

  /**
   * restoreCheckpoint makes the workspace's files those of commitHash and
   * forgets the checkpoints after it (they stay in the store: restoring
   * one by hash redoes).
   */
  async restoreCheckpoint(commitHash: string): Promise<void> {
    const client = this.#ready();
    await client.restore({ task: this.taskId, ref: commitHash });
    const idx = this.#checkpoints.indexOf(commitHash);
    if (idx !== -1) this.#checkpoints = this.#checkpoints.slice(0, idx + 1);
  }

  /** getDiff lists the changes from `from` (default: the base) to `to` (default: the workspace). */
  async getDiff({ from, to }: { from?: string; to?: string } = {}): Promise<CheckpointDiff[]> {
    const client = this.#ready();
    const res = await client.diff({ task: this.taskId, from: from ?? this.#baseHash!, to: to ?? "workspace" });
    return res.files.map((f) => {
      const beforeBytes = sideBytes(f, "before");
      const afterBytes = sideBytes(f, "after");
      return {
        paths: { relative: f.path, absolute: f.absolute },
        content: { before: beforeBytes.toString("utf8"), after: afterBytes.toString("utf8"), beforeBytes, afterBytes },
      };
    });
  }

  /** dispose stops ckpt. */
  async dispose(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    await client?.close();
  }

  override on<K extends keyof CheckpointEventMap>(event: K, listener: (data: CheckpointEventMap[K]) => void): this;
  override on(event: string, listener: (...args: any[]) => void): this {
    return super.on(event, listener);
  }

  #ready(): CkptClient {
    if (!this.#client) throw new Error("the checkpoint service is not initialized: call initShadowGit first");
    return this.#client;
  }

  #emitError(error: Error): void {
    this.#opts.log?.(`[ShadowCheckpointService] ${error.message}`);
    if (this.listenerCount("error") > 0) this.emit("error", { type: "error", error });
  }
}
