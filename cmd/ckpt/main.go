// Command ckpt saves, lists, diffs and restores checkpoints of a workspace.
// It binds flags and formats output; the work is done by package engine.
package main

import (
	"os"
	"runtime/debug"

	"github.com/ckpt/ckpt/internal/osfs"
)

// memoryLimit is the soft heap limit of a ckpt process unless GOMEMLIMIT
// says otherwise: the garbage collector works harder near it instead of
// letting the heap double past its live size (a first save's live heap is
// a few dozen MiB; without the limit its RSS is three times that).
const memoryLimit = 256 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	// Checkpoints hold whatever the workspace holds: everything ckpt itself
	// creates in the store is private to the user (restored workspace files
	// get their recorded modes explicitly).
	osfs.PrivateFiles()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
