// CheckpointTracker: the method shapes of Cline's shadow-git tracker
// (create, commit, resetHead, getDiffSet, getDiffCount) on ckpt.

import { CkptClient, type StartOptions } from "../client.js";
import type { FileDiff } from "../types.js";
import { sideBytes } from "./content.js";

/** How a tracker reaches ckpt: the workspace and, optionally, binary and store. */
export interface TrackerOptions extends Omit<StartOptions, "task" | "workspace"> {
  /** The workspace directory (Cline's cwd). */
  cwd: string;
}

/** One changed file, as Cline's getDiffSet returns it, plus its exact bytes. */
export interface DiffSetEntry {
  relativePath: string;
  absolutePath: string;
  /** The file before, decoded as UTF-8 ("" when it did not exist). */
  before: string;
  /** The file after, decoded as UTF-8 ("" when it was deleted). */
  after: string;
  /** The exact bytes before (also for files that are not UTF-8). */
  beforeBytes: Buffer;
  /** The exact bytes after. */
  afterBytes: Buffer;
}

/**
 * CheckpointTracker keeps one task's checkpoints of a workspace, one ckpt
 * task per Cline task id. Every commit is a checkpoint (empty ones too, so
 * each tool call has an anchor); resetHead rewinds the files, saving a
 * backup checkpoint first, so a later checkpoint can still be restored.
 */
export class CheckpointTracker {
  readonly taskId: string;
  readonly cwd: string;
  readonly #client: CkptClient;

  private constructor(taskId: string, cwd: string, client: CkptClient) {
    this.taskId = taskId;
    this.cwd = cwd;
    this.#client = client;
  }

  /** create starts `ckpt serve` for the task and workspace. */
  static async create(taskId: string, opts: TrackerOptions): Promise<CheckpointTracker> {
    if (!taskId) throw new Error("taskId is required");
    const { cwd, ...start } = opts;
    const client = CkptClient.start({ ...start, workspace: cwd, task: taskId });
    const tracker = new CheckpointTracker(taskId, cwd, client);
    await client.list({ task: taskId }); // fails here when the workspace or store is refused
    return tracker;
  }

  /** commit saves a checkpoint (even with nothing changed) and returns its hash. */
  async commit(): Promise<string> {
    const res = await this.#client.save({ task: this.taskId, allow_empty: true });
    return res.id;
  }

  /** resetHead makes the workspace's files those of checkpoint hash. */
  async resetHead(hash: string): Promise<void> {
    await this.#client.restore({ task: this.taskId, ref: hash });
  }

  /**
   * getDiffSet lists the files changed from lhsHash (default: the task's
   * first checkpoint) to rhsHash (default: the live workspace).
   */
  async getDiffSet(lhsHash?: string, rhsHash?: string): Promise<DiffSetEntry[]> {
    return (await this.#diff(lhsHash, rhsHash)).map((f) => {
      const beforeBytes = sideBytes(f, "before");
      const afterBytes = sideBytes(f, "after");
      return {
        relativePath: f.path,
        absolutePath: f.absolute,
        before: beforeBytes.toString("utf8"),
        after: afterBytes.toString("utf8"),
        beforeBytes,
        afterBytes,
      };
    });
  }

  /** getDiffCount is the number of files getDiffSet would list. */
  async getDiffCount(lhsHash?: string, rhsHash?: string): Promise<number> {
    return (await this.#diff(lhsHash, rhsHash)).length;
  }

  /** dispose stops the server. */
  async dispose(): Promise<void> {
    await this.#client.close();
  }

  async #diff(lhs?: string, rhs?: string): Promise<FileDiff[]> {
    const res = await this.#client.diff({ task: this.taskId, from: lhs ?? "@1", to: rhs ?? "workspace" });
    return res.files;
  }
}
