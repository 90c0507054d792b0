export { CkptClient, type StartOptions, type ExitInfo } from "./client.js";
export { findBinary, type FindBinaryOptions } from "./binary.js";
export { RpcConnection, type CallOptions, type Notification } from "./rpc.js";
export * from "./errors.js";
export type * from "./types.js";
export { CheckpointTracker, type TrackerOptions, type DiffSetEntry } from "./adapters/cline.js";
export {
  ShadowCheckpointService,
  type CheckpointServiceOptions,
  type CheckpointResult,
  type CheckpointDiff,
  type CheckpointEventMap,
} from "./adapters/roo.js";
