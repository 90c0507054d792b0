// Params and results of the methods `ckpt serve` exposes. Params are named
// like the CLI's flags (snake_case) and results are shaped like the CLI's
// --json output; fields may be added, never renamed.
//
// File names are bytes. A name that is not valid UTF-8 cannot cross JSON as
// a string without loss ("a\xff" and "a\xfe" both arrive as "a\ufffd"), so
// beside such a name the server sends its bytes in standard base64:
// path_base64 beside path (old_path_base64, absolute_base64 likewise), and
// beside a list of names one list of every name's bytes (e.g.
// written_paths_base64), present exactly when a name is not valid UTF-8.
// The params take the same form back: path_base64 instead of path,
// paths_base64 beside paths.

/** Standard base64 of a file name's bytes, sent only when the name is not valid UTF-8. */
export type NameBase64 = string;

/** Params every task-scoped method accepts. */
export interface TaskParams {
  /** The task (chain of checkpoints); default: the server's --task. */
  task?: string;
}

export interface SaveParams extends TaskParams {
  message?: string;
  allow_empty?: boolean;
  meta?: Record<string, string>;
  /** The host's state blob as text. */
  state?: string;
  /** The host's state blob as base64, for bytes that are not UTF-8. */
  state_base64?: string;
}

export interface SaveStats {
  files: number;
  added: number;
  modified: number;
  deleted: number;
  bytes_hashed: number;
  duration_ms: number;
}

export interface SaveResult {
  id: string;
  parent: string;
  task: string;
  seq: number;
  /** False when nothing changed and allow_empty was unset: id is the head. */
  created: boolean;
  empty: boolean;
  kind: string;
  stats: SaveStats;
  skipped: { path: string; path_base64?: NameBase64; reason: string; error?: string; kept?: boolean }[];
}

export interface Checkpoint {
  id: string;
  seq: number;
  parent: string;
  task: string;
  /** RFC 3339 time. */
  time: string;
  message: string;
  kind: string;
  empty: boolean;
  head: boolean;
  meta: Record<string, string>;
  root: string;
  state?: string;
  stats: SaveStats;
}

export type ListParams = TaskParams;

export interface ListResult {
  task: string;
  head: string;
  /** Oldest first. */
  checkpoints: Checkpoint[];
}

export interface ShowParams extends TaskParams {
  ref: string;
}

export type ShowResult = Checkpoint;

export interface LsParams extends TaskParams {
  ref: string;
  path?: string;
  /** The directory's bytes (a result's path_base64), instead of path. */
  path_base64?: NameBase64;
}

export interface LsEntry {
  path: string;
  path_base64?: NameBase64;
  kind: string;
  /** Octal, e.g. "0644". */
  mode: string;
  size: number;
  id: string;
}

export interface LsResult {
  entries: LsEntry[];
}

/** The file by its name (path) or by its name's bytes (path_base64). */
export type CatParams = TaskParams & { ref: string } & ({ path: string; path_base64?: never } | { path?: never; path_base64: NameBase64 });

/** A file's bytes: content when they are valid UTF-8, else content_base64. */
export interface CatResult {
  path: string;
  path_base64?: NameBase64;
  size: number;
  content?: string;
  content_base64?: string;
}

export type DiffMode = "checkpoint" | "from-init" | "to-current" | "full";

export interface DiffParams extends TaskParams {
  /** Default HEAD. */
  from?: string;
  /** Default the live workspace ("workspace"). */
  to?: string;
  /** Picks from/to around ref instead (Roo Code's four modes). */
  mode?: DiffMode;
  ref?: string;
  /** Limit to these paths; one that names nothing is an error. */
  paths?: string[];
  /** More paths, as their bytes (a result's path_base64). */
  paths_base64?: NameBase64[];
}

export type FileStatus = "added" | "modified" | "deleted" | "renamed" | "typechange" | "mode" | (string & {});

/** One changed file. Each side is text when its bytes are valid UTF-8, else *_base64. */
export interface FileDiff {
  path: string;
  path_base64?: NameBase64;
  absolute: string;
  absolute_base64?: NameBase64;
  status: FileStatus;
  old_path?: string;
  old_path_base64?: NameBase64;
  binary: boolean;
  before: string | null;
  after: string | null;
  before_base64?: string;
  after_base64?: string;
  before_size: number;
  after_size: number;
  too_large?: boolean;
}

export interface DiffResult {
  from: string;
  to: string;
  files: FileDiff[];
}

export interface RestoreParams extends TaskParams {
  ref: string;
  only?: "workspace" | "state" | "both";
  /** Restore only these paths; one that names nothing is an error. */
  paths?: string[];
  /** More paths, as their bytes (a result's path_base64). */
  paths_base64?: NameBase64[];
  dry_run?: boolean;
  no_backup?: boolean;
  force?: boolean;
}

export interface Conflict {
  path: string;
  path_base64?: NameBase64;
  reason: string;
}

export interface RestoreResult {
  restored: string;
  backup: string;
  written: number;
  deleted: number;
  written_paths: string[];
  deleted_paths: string[];
  /** Every written path's bytes, in order, when one is not valid UTF-8. */
  written_paths_base64?: NameBase64[];
  /** Every deleted path's bytes, in order, when one is not valid UTF-8. */
  deleted_paths_base64?: NameBase64[];
  /** What force destroyed (or, dry, would) that no checkpoint holds: no undo brings it back. */
  discarded_paths: string[];
  /** Every discarded path's bytes, in order, when one is not valid UTF-8. */
  discarded_paths_base64?: NameBase64[];
  conflicts: Conflict[];
  state?: string;
  /** The state blob restored (only=state or both), as text ... */
  state_content?: string;
  /** ... or as base64 when it is not UTF-8. */
  state_content_base64?: string;
  dry_run: boolean;
  duration_ms: number;
  /** Where duration_ms went (the rest: the wait for the lock, settling another restore). */
  phases_ms: RestorePhases;
}

/** A restore's phases in milliseconds, in the order it spends them; a dry run fills backup and plan only. */
export interface RestorePhases {
  /** The backup checkpoint of the current state (or, without one, the scan of it). */
  backup: number;
  /** The plan, and finding (or fetching) the blobs it writes. */
  plan: number;
  /** Writing the journal durably (and, watched, the audit of the restore's events beginning). */
  journal: number;
  /** Removals, directories and file contents (small restores: each file made durable). */
  write: number;
  /** The staged files' syncfs and renames (larger restores), directory modes. */
  place: number;
  /** The workspace's last flush, the task's head moving beside it. */
  flush: number;
  /** The audit's end (watched) and clearing the journal durably. */
  finish: number;
}

export type TasksParams = Record<string, never>;

export interface TaskInfo {
  name: string;
  head: string;
  checkpoints: number;
  first: string;
  last: string;
  exclusive_bytes: number;
}

export interface TasksResult {
  tasks: TaskInfo[];
}

export interface DropParams {
  task: string;
}

export interface DropResult {
  task: string;
  head: string;
  checkpoints: string[];
  exclusive_bytes: number;
}

export interface GcParams {
  keep_last?: number;
  /** A Go duration, e.g. "720h". */
  max_age?: string;
  /** A size, e.g. "2GiB". */
  max_size?: string;
}

export interface GcResult {
  policy: { keep_last: number; max_age: string; max_size: number };
  dropped: { id: string; task: string; seq: number; time: string; kind: string; reason: string }[];
  checkpoints_deleted: number;
  trees_deleted: number;
  blobs_deleted: number;
  dir_caches_dropped: number;
  packs_rewritten: number;
  packs_removed: number;
  packs_truncated: number;
  bytes_copied: number;
  bytes_before: number;
  bytes_after: number;
  reclaimed: number;
  duration_ms: number;
}

export interface VerifyParams {
  quick?: boolean;
}

export interface VerifyProblem {
  checkpoint: string;
  task: string;
  seq: number;
  path: string;
  path_base64?: NameBase64;
  object: string;
  kind: string;
  message: string;
}

export interface VerifyResult {
  ok: boolean;
  quick: boolean;
  checkpoints: number;
  trees: number;
  blobs: number;
  locators: number;
  packs: number;
  bytes_hashed: number;
  problems: VerifyProblem[];
}

export type StatsParams = Record<string, never>;

export interface StatsResult {
  disk_bytes: number;
  index_bytes: number;
  pack_bytes: number;
  live_bytes: number;
  live_fraction: number;
  pack_count: number;
  packs: { pack: number; bytes: number; live_bytes: number }[];
  checkpoints: number;
  trees: number;
  blobs: number;
  logical_bytes: number;
  unique_bytes: number;
  stored_bytes: number;
  dedup_ratio: number;
  compression_ratio: number;
  /** Packs a first save stored uncompressed, still waiting for compression, and their size. */
  deferred_packs: number;
  deferred_bytes: number;
  /** The process compressing them (the CLI's background-recompress), when one runs. */
  background_pid?: number;
  tasks: { name: string; checkpoints: number; logical_bytes: number; exclusive_bytes: number }[];
  /** The change watcher of the server that answered; absent when none runs. */
  watcher?: WatcherStats;
}

/** A server's change watcher and what its re-verifications found. */
export interface WatcherStats {
  /** "inotify", "ReadDirectoryChangesW", "FSEvents", or "none" (every save walks the workspace; fallback says why). */
  backend: string;
  fallback?: string;
  provisional: boolean;
  watches: number;
  /** Directories that could not be watched, walked at every save. */
  unwatched: number;
  overflows: number;
  /** Re-verifications run, and the changes they found that no event had reported (each sent as missedChanges). */
  reverified: number;
  missed: number;
}

export interface LogParams extends TaskParams {
  /** Search every task instead of one. */
  all?: boolean;
  /** Workspace-relative files or directories; none: the whole workspace; one that names nothing is an error. */
  paths?: string[];
  /** More paths, as their bytes (a result's path_base64). */
  paths_base64?: NameBase64[];
}

/** One changed path; a size is -1 for a side that does not exist. */
export interface HistoryChange {
  path: string;
  path_base64?: NameBase64;
  /** The path before a rename. */
  old_path?: string;
  old_path_base64?: NameBase64;
  status: FileStatus;
  size_before: number;
  size_after: number;
}

export interface HistoryEntry {
  checkpoint: Checkpoint;
  /** The changes under the paths asked for, from the checkpoint's parent. */
  changes: HistoryChange[];
}

export interface LogResult {
  /** The checkpoints in which the paths changed, newest first. */
  entries: HistoryEntry[];
  checkpoints_compared: number;
  trees_read: number;
}

export interface ExportParams extends TaskParams {
  ref: string;
  /** An absolute path that does not exist or is an empty directory. */
  dir: string;
  /** Export only these workspace-relative paths; one that names nothing is an error. */
  paths?: string[];
  /** More paths, as their bytes (a result's path_base64). */
  paths_base64?: NameBase64[];
}

export interface ExportResult {
  checkpoint: string;
  dir?: string;
  dir_base64?: NameBase64;
  written_paths: string[];
  /** Every written path's bytes, in order, when one is not valid UTF-8. */
  written_paths_base64?: NameBase64[];
  conflicts: Conflict[];
}

export interface BisectParams extends TaskParams {
  /** A shell command run in each checkpoint exported: exit 0 good, 125 skip, 1-127 bad. */
  run: string;
  /** A checkpoint without the problem; default the task's first. */
  good?: string;
  /** A checkpoint with the problem; default the head. */
  bad?: string;
}

export interface BisectStep {
  seq: number;
  id: string;
  verdict: "good" | "bad" | "skip";
}

export interface BisectResult {
  /** The first checkpoint at which the command fails. */
  first_bad: Checkpoint;
  /** When skipped steps leave several, the checkpoints any of which may be the first bad. */
  candidates?: Checkpoint[];
  /** The checkpoints tested, in order. */
  steps: BisectStep[];
  /** first_bad's changes from the checkpoint before it. */
  changes: HistoryChange[];
}

/** The progress value of a long call (save, restore, gc, verify). */
export interface ProgressValue {
  phase?: string;
  done?: number;
  total?: number;
  [key: string]: unknown;
}

/** Server notifications, shaped like Roo Code's checkpoint events. */
export interface CkptEvents {
  initialize: {
    workspaceDir: string;
    /** workspaceDir's bytes, when its name is not valid UTF-8. */
    workspaceDir_base64?: NameBase64;
    baseHash: string;
    created: boolean;
    duration: number;
    task?: string;
  };
  checkpoint: { fromHash: string; toHash: string; duration: number; task?: string };
  restore: { commitHash: string; duration: number; task?: string };
  error: { error: string; task?: string };
  warning: { message: string; task?: string };
  /**
   * Sent to every client, whatever its task: a re-verification found these
   * directories (workspace-relative, "" for the root) changed without an
   * event from the server's change watcher; the next save reads them.
   */
  missedChanges: { paths: string[]; paths_base64?: NameBase64[]; duration: number };
}
