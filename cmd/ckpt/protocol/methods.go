package protocol

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/jsonrpc"
)

// access says what a method does to the workspace and store; MCP clients
// read it as tool annotations.
type access int

const (
	query       access = iota // reads only
	write                     // adds checkpoints or files outside the workspace, changes nothing saved
	destructive               // rewrites files or deletes checkpoints
)

// hostMethod is one operation a host calls over `ckpt serve` (by name) or
// `ckpt mcp` (as the tool "ckpt_"+name). Params are named like the CLI's
// flags and results are shaped like its --json output.
type hostMethod struct {
	name, title, doc string
	access           access
	route            jsonrpc.Route
	tool             func(*mcpServer)
	// relayedTool adds the MCP tool as a call of the method on a resident
	// server (see ServeMCPAttached).
	relayedTool func(*jsonrpc.Client) func(*mcpServer)
}

// defineMethod makes a hostMethod from a typed function: the JSON-RPC route
// and the MCP tool both decode P and encode R, so their schemas cannot drift.
// Each call runs between busy's begin and end (busy may be nil): a resident
// server's background work yields while it runs.
func defineMethod[P, R any](busy func() (end func()), name, title string, acc access, doc string,
	fn func(context.Context, P) (R, error)) hostMethod {
	if busy != nil {
		inner := fn
		fn = func(ctx context.Context, p P) (R, error) {
			defer busy()()
			return inner(ctx, p)
		}
	}
	return hostMethod{name: name, title: title, doc: doc, access: acc,
		route: jsonrpc.Method(name, fn), tool: mcpTool(name, title, acc, doc, fn),
		relayedTool: func(c *jsonrpc.Client) func(*mcpServer) {
			return mcpTool(name, title, acc, doc, relayedCall[P, R](c, name))
		}}
}

// Session is what every request of a host connection shares.
type Session struct {
	// Task is the task of requests that name none (the CLI's --task).
	Task string
	// Scans receives the engine's scan progress (open the engine with
	// Options.OnProgress = Scans.Send); nil: requests get none.
	Scans *ScanHub
	// Busy, when set, is called as each request starts; the request calls
	// the function it returns when it ends.
	Busy func() (end func())
	// Store receives the engine's store-wide events (open the engine with
	// Options.OnEvent calling Store.Send), which every connection of the
	// session gets as notifications; nil: none.
	Store *StoreEvents
}

// Routes is the method table as JSON-RPC routes on e. notify sends the
// events (initialize, checkpoint, restore, error) to the host; it may be nil.
func Routes(e *engine.Engine, s Session, notify func(method string, params any)) []jsonrpc.Route {
	table := newHost(e, s, notify).table()
	routes := make([]jsonrpc.Route, len(table))
	for i, m := range table {
		routes[i] = m.route
	}
	return routes
}

// host binds the method table to an engine and the session's defaults.
type host struct {
	s      Session
	e      *engine.Engine
	events *taskEvents
	scans  *ScanHub
	// attached is the task a client of a resident server attached with
	// (see Resident), nil when none: it replaces the session's Task.
	attached atomic.Pointer[string]
	// capture is what a client of a resident server that attached with
	// its capture options has saves, restores and workspace diffs read
	// of the workspace (see Resident); nil: the engine's own.
	capture atomic.Pointer[engine.Capture]
}

func newHost(e *engine.Engine, s Session, notify func(string, any)) *host {
	scans := s.Scans
	if scans == nil {
		scans = &ScanHub{} // the engine was opened without one: no scan progress
	}
	return &host{s: s, e: e, events: newTaskEvents(e, notify), scans: scans}
}

// task returns t, or the session's task when empty.
func (h *host) task(t string) string {
	if t != "" {
		return t
	}
	if a := h.attached.Load(); a != nil {
		return *a
	}
	return h.s.Task
}

// table lists every operation.
func (h *host) table() []hostMethod {
	idle := h.s.Busy
	return []hostMethod{
		defineMethod(idle, "save", "Save a checkpoint", write,
			"Save a checkpoint of the workspace. With nothing changed and allow_empty unset, nothing is created and the head is returned with created=false.",
			h.save),
		defineMethod(idle, "list", "List checkpoints", query, "List the task's checkpoints, oldest first, with the head marked.", h.list),
		defineMethod(idle, "show", "Show a checkpoint", query,
			"Show one checkpoint. Refs: id, unique hex prefix, HEAD, HEAD~N, @N.", h.show),
		defineMethod(idle, "ls", "List a checkpoint's directory", query, "List a directory (path, default the root) of a checkpoint.", h.ls),
		defineMethod(idle, "cat", "Read a file of a checkpoint", query,
			"A file's bytes as they were in a checkpoint: content when valid UTF-8, else content_base64.", h.cat),
		defineMethod(idle, "diff", "Diff checkpoints", query,
			"Changes between two checkpoints, or a checkpoint and the live workspace, with both sides' bytes (before/after as text when valid UTF-8, else before_base64/after_base64). Refs: id, unique hex prefix, HEAD, HEAD~N, @N, workspace. mode (checkpoint, from-init, to-current, full) picks a range around ref instead of from/to.",
			h.diff),
		defineMethod(idle, "restore", "Restore a checkpoint", destructive,
			"Rewind the workspace files (only=workspace, default), the state blob (only=state; files and head stay) or both to a checkpoint. A backup checkpoint of the current state is saved first unless no_backup; files no checkpoint captured are never touched (reported as conflicts unless force).",
			h.restore),
		defineMethod(idle, "tasks", "List tasks", query, "List the store's tasks with their checkpoint counts and heads.", h.tasks),
		defineMethod(idle, "drop", "Drop a task", destructive,
			"Remove a task's checkpoints and head; content other tasks share stays, gc reclaims the rest.", h.drop),
		defineMethod(idle, "gc", "Collect garbage", destructive,
			"Apply the retention policy (keep_last, max_age, max_size; given ones are remembered), then delete what no checkpoint references and compact packs.",
			h.gc),
		defineMethod(idle, "verify", "Verify the store", query,
			"Check that every checkpoint's trees and blobs exist and hash correctly (quick: structure only).", h.verify),
		defineMethod(idle, "stats", "Store statistics", query, "Store size, dedup and compression ratios, packs and per-task usage.", h.stats),
		defineMethod(idle, "push", "Push to a remote", write,
			"Upload the task's checkpoints a remote lacks (data, then metadata, then the head by a conditional write). A fork is kept: this store's history goes up as task TASK~ID, reported in forked.",
			h.push),
		defineMethod(idle, "pull", "Pull from a remote", write,
			"Import the task's history from a remote; files are fetched when a restore, diff or cat needs them. A forked task fails and imports nothing.",
			h.pull),
		defineMethod(idle, "log", "History of a path", query,
			"The checkpoints in which paths (files or directories; none: the whole workspace) changed, newest first, with each change's status and sizes. all searches every task.",
			h.history),
		defineMethod(idle, "export", "Export a checkpoint", write,
			"Write a checkpoint's files (or some paths of it) into dir, an absolute path that does not exist or is empty; the workspace and the head are never touched.",
			h.export),
		defineMethod(idle, "bisect", "Find the step that broke something", write,
			"Binary-search the task's checkpoints between good (default the first) and bad (default the head) for the first one at which the shell command run fails (exit 0 good, 125 skip, 1-127 bad), each exported into a scratch directory: the workspace is never touched. Returns the first bad checkpoint and its changes.",
			h.bisect),
	}
}

// durationMs is d in whole milliseconds, as the events carry it.
func durationMs(d time.Duration) int64 { return d.Milliseconds() }
