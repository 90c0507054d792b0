// Checkpoints for Cline's SDK (sdk/packages/core) on ckpt: a
// createCheckpoint for createCheckpointHooks, and the restore and compare
// functions of the shapes its session layer calls. Checkpoints are kept in
// ckpt's store, so a host gets them in any folder, a git repository or
// not, with nothing written into the user's repository.

import { CkptSharedClient, type ConnectOptions } from "../shared.js";
import { sideBytes } from "./content.js";

/** How the functions reach ckpt; the profile defaults to `cline`. */
export type CkptOptions = Omit<ConnectOptions, "workspace" | "task">;

/** The SDK's CheckpointEntry. `ref` names the ckpt task and checkpoint. */
export interface CheckpointEntry {
  ref: string;
  createdAt: number;
  runCount: number;
  kind?: "stash" | "commit";
}

/** What the SDK's createCheckpoint hook option is called with. */
export interface CheckpointContext {
  cwd: string;
  sessionId: string;
  runCount: number;
}

/** The SDK's CheckpointContentDiff: an absolute path and both sides as text. */
export interface CheckpointContentDiff {
  filePath: string;
  leftContent: string;
  rightContent: string;
}

/** The three functions an SDK host wires in. */
export interface SdkCheckpoints {
  /** createCheckpoint saves a checkpoint of ctx.cwd for the session's turn (empty ones too). */
  createCheckpoint(ctx: CheckpointContext): Promise<CheckpointEntry>;
  /** applyCheckpointToWorktree makes cwd's files those of the checkpoint: changed files rewound, created ones removed, deleted ones back. */
  applyCheckpointToWorktree(cwd: string, checkpoint: CheckpointEntry): Promise<void>;
  /** buildCheckpointWorkspaceDiff lists the files that differ between the checkpoint and cwd now. */
  buildCheckpointWorkspaceDiff(cwd: string, checkpoint: CheckpointEntry): Promise<CheckpointContentDiff[]>;
}

/** The prefix of the refs createCheckpoint makes: ckpt:<task>:<id>. */
const refPrefix = "ckpt:";

/**
 * sdkCheckpoints makes the functions for one ckpt configuration. Each
 * session is a ckpt task (`cline-<sessionId>`); each folder's store is
 * reached through one shared client (see CkptSharedClient).
 */
export function sdkCheckpoints(opts: CkptOptions = {}): SdkCheckpoints {
  const clients = new Map<string, CkptSharedClient>();
  const client = (cwd: string) => {
    let c = clients.get(cwd);
    if (!c) {
      c = CkptSharedClient.connect({ profile: "cline", ...opts, workspace: cwd });
      clients.set(cwd, c);
    }
    return c;
  };
  return {
    async createCheckpoint({ cwd, sessionId, runCount }) {
      const task = `cline-${sessionId.replaceAll("/", "_")}`;
      const res = await client(cwd).save({
        task,
        message: `cline checkpoint session=${sessionId} run=${runCount}`,
        allow_empty: true,
        meta: { session: sessionId, run: String(runCount) },
      });
      return { ref: `${refPrefix}${task}:${res.id}`, createdAt: Date.now(), runCount };
    },
    async applyCheckpointToWorktree(cwd, checkpoint) {
      const { task, id } = parseRef(checkpoint.ref);
      await client(cwd).restore({ task, ref: id, force: true });
    },
    async buildCheckpointWorkspaceDiff(cwd, checkpoint) {
      const { task, id } = parseRef(checkpoint.ref);
      const res = await client(cwd).diff({ task, from: id, to: "workspace" });
      return res.files.map((f) => ({
        filePath: f.absolute,
        leftContent: sideBytes(f, "before").toString("utf8"),
        rightContent: sideBytes(f, "after").toString("utf8"),
      }));
    },
  };
}

/** parseRef splits a ref createCheckpoint made; it throws for any other. */
function parseRef(ref: string): { task: string; id: string } {
  const at = ref.lastIndexOf(":");
  if (!ref.startsWith(refPrefix) || at <= refPrefix.length) throw new Error(`checkpoint ref ${JSON.stringify(ref)} was not made by ckpt's createCheckpoint`);
  return { task: ref.slice(refPrefix.length, at), id: ref.slice(at + 1) };
}

const defaults = sdkCheckpoints();

/** createCheckpoint for createCheckpointHooks({ createCheckpoint }), with ckpt's defaults. */
export const createCheckpoint = defaults.createCheckpoint;
/** applyCheckpointToWorktree with ckpt's defaults. */
export const applyCheckpointToWorktree = defaults.applyCheckpointToWorktree;
/** buildCheckpointWorkspaceDiff with ckpt's defaults. */
export const buildCheckpointWorkspaceDiff = defaults.buildCheckpointWorkspaceDiff;
