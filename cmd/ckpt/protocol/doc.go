// Package protocol is ckpt's host protocol: the method table a host calls
// (save, list, show, ls, cat, diff, restore, tasks, drop, gc, verify, stats,
// push, pull), served as JSON-RPC 2.0 (ServeJSONRPC on one engine, Resident
// to the many clients of a store's server) and as MCP tools named
// ckpt_<method> (NewMCPServer on one engine, ServeMCPAttached through a
// store's server, which `ckpt mcp` uses), and the wire schema
// they and the CLI's --json output share: the *JSON types and the views
// that make them from the engine's results, the events, the error data and
// the exit codes.
//
// Params are named like the CLI's flags and results are shaped like its
// --json output, so a host can move between the CLI and a server without
// renaming a field. A method and its tool decode the same params type and
// encode the same result type, so their schemas cannot drift; the goldens
// under testdata/wire hold the shapes fixed, for the TypeScript client too.
//
// Events reach a host as notifications (MCP: log messages of the logger
// "ckpt", {"event": name, "params": params}). initialize, checkpoint,
// restore, warning and error concern one task and go to the connections
// that are its clients (see Resident). missedChanges concerns the store:
// a re-verification of the workspace (engine.Reverify, every five minutes
// on a server) found directories changed without an event from the change
// watcher, {"paths": [...], "paths_base64"?: [...], "duration": ms}; the
// next save reads them. Every connection of the serve, serve --listen or
// mcp that runs the watcher gets it (StoreEvents).
package protocol
