package engine

import (
	"fmt"

	"github.com/ckpt/ckpt/engine/internal/maint"
)

// Problem is one integrity failure: what is wrong, and where it was first
// seen (the checkpoint and workspace path that reference the object).
type Problem struct {
	Checkpoint ID // zero for store-level problems (a locator, a task)
	Task       string
	Seq        uint64
	Path       string // workspace-relative path; "" for the root tree or the store
	Object     ID     // the tree, blob, chunk or checkpoint at fault
	Kind       string // "checkpoint", "tree", "blob", "chunk", "state", "locator" or "task"
	Message    string
}

// String renders the problem on one line.
func (p Problem) String() string {
	where := ""
	if !p.Checkpoint.IsZero() {
		where = fmt.Sprintf("checkpoint %s (task %s @%d) ", p.Checkpoint.Short(), p.Task, p.Seq)
	}
	if p.Path != "" {
		where += p.Path + ": "
	} else if where != "" {
		where += "/: "
	}
	return where + p.Message
}

// PhaseProgress reports how far a store-wide operation (GC, Verify) got in
// its current phase. Total is 0 when unknown.
type PhaseProgress struct {
	Phase       string
	Done, Total int64
}

// maintStore is the maintenance mechanics' view of the store.
func (e *Engine) maintStore() *maint.Store {
	return &maint.Store{Dir: e.storeDir, DB: e.db, Blobs: e.blobs, Step: e.opts.hooks.gcStep,
		SliceBytes: e.opts.hooks.recompressSlice}
}

// publicProblem renders an internal problem for the caller.
func publicProblem(p maint.Problem) Problem {
	return Problem{Checkpoint: ID(p.Checkpoint), Task: p.Task, Seq: p.Seq, Path: p.Path,
		Object: ID(p.Object), Kind: p.Kind, Message: p.Message}
}

// progressFunc adapts a caller's progress callback; nil stays nil.
func progressFunc(fn func(PhaseProgress)) func(maint.Progress) {
	if fn == nil {
		return nil
	}
	return func(p maint.Progress) { fn(PhaseProgress(p)) }
}
