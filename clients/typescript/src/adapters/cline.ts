// CheckpointTracker: Cline's shadow-git tracker (create, commit, resetHead,
// getDiffSet, getDiffCount) on ckpt.

import { access, constants } from "node:fs/promises";
import { CkptSharedClient, type ConnectOptions } from "../shared.js";
import type { FileDiff } from "../types.js";
import { sideBytes } from "./content.js";
import { protectedFolder } from "./protected.js";

/** How a tracker reaches ckpt; the profile defaults to `cline`. */
export type CkptOptions = Omit<ConnectOptions, "workspace" | "task">;

/** The options form of create: the workspace and how to reach ckpt. */
export interface TrackerOptions extends CkptOptions {
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
 * task per Cline task id, in the workspace's store shared with every other
 * tracker, CLI and host (see CkptSharedClient): trackers of several tasks
 * work at once, and one dropped without dispose() leaks nothing. Every
 * commit is a checkpoint (empty ones too, so each tool call has an
 * anchor); resetHead rewinds the files, saving a backup checkpoint first,
 * so a later checkpoint can still be restored.
 */
export class CheckpointTracker {
  readonly taskId: string;
  readonly cwd: string;
  readonly #client: CkptSharedClient;

  private constructor(taskId: string, cwd: string, client: CkptSharedClient) {
    this.taskId = taskId;
    this.cwd = cwd;
    this.#client = client;
  }

  /**
   * create is Cline's: the tracker of taskId for workspacePath (the first
   * of several roots), or undefined when enableCheckpointsSetting is off.
   * It fails as Cline's does for a workspace it cannot read or a protected
   * folder (home, Desktop, Documents, Downloads), and with ckpt's typed
   * errors when the store refuses. ckpt, the store and the profile
   * (default `cline`) come from the optional last argument.
   */
  static create(taskId: string, enableCheckpointsSetting: boolean, workspacePath: string | string[], ckpt?: CkptOptions): Promise<CheckpointTracker | undefined>;
  /** create in the options form: always a tracker. */
  static create(taskId: string, opts: TrackerOptions): Promise<CheckpointTracker>;
  static async create(
    taskId: string,
    enabledOrOpts: boolean | TrackerOptions,
    workspacePath?: string | string[],
    ckpt: CkptOptions = {},
  ): Promise<CheckpointTracker | undefined> {
    let cwd: string | undefined;
    if (typeof enabledOrOpts === "object") {
      ({ cwd, ...ckpt } = enabledOrOpts);
    } else {
      if (!enabledOrOpts) return undefined;
      cwd = Array.isArray(workspacePath) ? workspacePath[0] : workspacePath;
    }
    if (!taskId) throw new Error("taskId is required");
    if (!cwd) throw new Error("At least one workspace path must be provided");
    await validateWorkspacePath(cwd);
    const client = CkptSharedClient.connect({ profile: "cline", ...ckpt, workspace: cwd, task: taskId });
    await client.attach(); // fails here when the workspace or store is refused
    return new CheckpointTracker(taskId, cwd, client);
  }

  /** commit saves a checkpoint (even with nothing changed) and returns its hash. */
  async commit(): Promise<string | undefined> {
    const res = await this.#client.save({ task: this.taskId, allow_empty: true, message: `checkpoint-${this.taskId}` });
    return res.id;
  }

  /** resetHead makes the workspace's files those of checkpoint hash. */
  async resetHead(hash: string): Promise<void> {
    await this.#client.restore({ task: this.taskId, ref: cleanHash(hash) });
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

  /** dispose closes the tracker's connection now instead of after its linger; optional. */
  async dispose(): Promise<void> {
    await this.#client.close();
  }

  async #diff(lhs?: string, rhs?: string): Promise<FileDiff[]> {
    const from = lhs ? cleanHash(lhs) : "@1";
    const res = await this.#client.diff({ task: this.taskId, from, to: rhs ? cleanHash(rhs) : "workspace" });
    return res.files;
  }
}

/** cleanHash drops the "HEAD " prefix Cline's commit results may carry. */
function cleanHash(hash: string): string {
  return hash.startsWith("HEAD ") ? hash.slice(5) : hash;
}

/** validateWorkspacePath refuses what Cline's does, with its messages. */
async function validateWorkspacePath(cwd: string): Promise<void> {
  try {
    await access(cwd, constants.R_OK);
  } catch (error) {
    throw new Error(`Cannot access workspace directory. Please ensure VS Code has permission to access your workspace. Error: ${error instanceof Error ? error.message : String(error)}`);
  }
  const folder = protectedFolder(cwd);
  if (folder) throw new Error(`Cannot use checkpoints in ${folder === "home" ? "home" : folder} directory`);
}
