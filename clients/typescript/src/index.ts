export { CkptClient, type StartOptions, type ExitInfo } from "./client.js";
export { CkptSharedClient, type ConnectOptions, type AttachResult } from "./shared.js";
export { CkptCalls } from "./calls.js";
export { findBinary, type FindBinaryOptions } from "./binary.js";
export type { Workspace } from "./server.js";
export { RpcConnection, maxRequestBytes, type CallOptions, type Notification } from "./rpc.js";
export * from "./errors.js";
export type * from "./types.js";
export { CheckpointTracker, type TrackerOptions, type DiffSetEntry } from "./adapters/cline.js";
export {
  ShadowCheckpointService,
  RepoPerTaskCheckpointService,
  type CkptOptions,
  type CheckpointServiceOptions,
  type CheckpointResult,
  type CheckpointDiff,
  type CheckpointEventMap,
} from "./adapters/roo.js";
export * as clineSdk from "./adapters/cline-sdk.js";
