// Typed errors decoded from a JSON-RPC error object. The class is chosen from
// the error's structured data ({exit_code, kind, ...}), never from its text.

/** A JSON-RPC error object as `ckpt serve` sends it. */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** The structured data ckpt attaches to its errors. */
export interface CkptErrorData {
  /** The exit code the CLI would have used (see DESIGN.md's exit codes). */
  exit_code?: number;
  /** A stable name of the error class, e.g. "busy", "unknown_ref". */
  kind?: string;
  /** For conflicts: the paths the restore did not bring to the target. */
  conflicts?: unknown[];
  [key: string]: unknown;
}

/** JSON-RPC error codes. */
export const RpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  RequestCancelled: -32800,
  ServerError: -32000,
} as const;

/** The exit codes ckpt reports in `data.exit_code`. */
export const ExitCode = {
  Error: 1,
  Usage: 2,
  Busy: 3,
  Refused: 4,
  Corrupt: 5,
  Conflict: 6,
} as const;

/** Any error ckpt answered a call with. */
export class CkptError extends Error {
  /** The JSON-RPC error code. */
  readonly code: number;
  /** The CLI exit code from `data.exit_code`, or undefined. */
  readonly exitCode: number | undefined;
  /** The error's structured data, as sent. */
  readonly data: CkptErrorData | undefined;

  constructor(err: RpcErrorObject) {
    super(err.message);
    this.name = new.target.name;
    this.code = err.code;
    this.data = isRecord(err.data) ? (err.data as CkptErrorData) : undefined;
    this.exitCode = typeof this.data?.exit_code === "number" ? this.data.exit_code : undefined;
  }
}

/** The store is locked by another process (exit code 3); retry later. */
export class CkptBusyError extends CkptError {}

/** A ref named no checkpoint (exit code 2, kind "unknown_ref"). */
export class CkptUnknownRefError extends CkptError {}

/** The workspace or store was refused (exit code 4). */
export class CkptRefusedError extends CkptError {}

/** The store is damaged (exit code 5). */
export class CkptCorruptError extends CkptError {}

/** A restore finished with conflicts (exit code 6). */
export class CkptConflictError extends CkptError {
  /** The conflicts, from `data.conflicts`. */
  readonly conflicts: unknown[];

  constructor(err: RpcErrorObject) {
    super(err);
    this.conflicts = Array.isArray(this.data?.conflicts) ? this.data.conflicts : [];
  }
}

/** The call itself was wrong: unknown method, invalid params, bad usage. */
export class CkptUsageError extends CkptError {}

/** The server was asked to cancel the call and did (JSON-RPC -32800). */
export class CkptCancelledError extends CkptError {}

/**
 * The connection to `ckpt serve` is gone: the client was closed or the
 * process exited. Calls pending then reject with it.
 */
export class CkptConnectionError extends Error {
  /** The process's exit code, when it exited. */
  readonly exitCode: number | null;
  /** The signal that ended the process, when one did. */
  readonly signal: string | null;
  /** The end of what the process wrote to stderr. */
  readonly stderr: string;

  constructor(message: string, exit: { code: number | null; signal: string | null; stderr: string }) {
    super(message);
    this.name = "CkptConnectionError";
    this.exitCode = exit.code;
    this.signal = exit.signal;
    this.stderr = exit.stderr;
  }
}

type ErrorClass = new (err: RpcErrorObject) => CkptError;

/** The class of each `data.kind`. */
const byKind = new Map<string, ErrorClass>([
  ["busy", CkptBusyError],
  ["unknown_ref", CkptUnknownRefError],
  ["usage", CkptUsageError],
  ["refused", CkptRefusedError],
  ["corrupt", CkptCorruptError],
  ["conflict", CkptConflictError],
]);

/** The class of each `data.exit_code`, for errors without a known kind. */
const byExitCode: Record<number, ErrorClass> = {
  [ExitCode.Usage]: CkptUnknownRefError,
  [ExitCode.Busy]: CkptBusyError,
  [ExitCode.Refused]: CkptRefusedError,
  [ExitCode.Corrupt]: CkptCorruptError,
  [ExitCode.Conflict]: CkptConflictError,
};

/** The class of JSON-RPC's own error codes. */
const byRpcCode: Record<number, ErrorClass> = {
  [RpcCode.InvalidRequest]: CkptUsageError,
  [RpcCode.MethodNotFound]: CkptUsageError,
  [RpcCode.InvalidParams]: CkptUsageError,
  [RpcCode.RequestCancelled]: CkptCancelledError,
};

/**
 * errorFromRpc picks the typed error for a JSON-RPC error object: by the
 * JSON-RPC code for protocol errors, else by `data.kind`, else by
 * `data.exit_code`, else CkptError.
 */
export function errorFromRpc(err: RpcErrorObject): CkptError {
  const data = isRecord(err.data) ? (err.data as CkptErrorData) : undefined;
  const cls =
    byRpcCode[err.code] ??
    (typeof data?.kind === "string" ? byKind.get(data.kind) : undefined) ??
    (typeof data?.exit_code === "number" ? byExitCode[data.exit_code] : undefined) ??
    CkptError;
  return new cls(err);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * errorFromExit is the typed error of a ckpt process that ended with a
 * ckpt exit code (2-6) before it could answer, e.g. a server that could
 * not open the store: CkptBusyError for 3, naming the holder as ckpt's
 * stderr does. Its message is the last line ckpt wrote to stderr. Other
 * codes give undefined: the caller reports the exit as it is.
 */
export function errorFromExit(code: number | null, stderr: string): CkptError | undefined {
  if (code === null || code < ExitCode.Usage || code > ExitCode.Conflict) return undefined;
  const lines = stderr.trim().split(/\r?\n/);
  const message = (lines[lines.length - 1] ?? "").replace(/^ckpt: /, "") || `ckpt exited with code ${code}`;
  const data: CkptErrorData = { exit_code: code };
  if (code === ExitCode.Usage) data.kind = "usage";
  return errorFromRpc({ code: RpcCode.ServerError, message, data });
}
