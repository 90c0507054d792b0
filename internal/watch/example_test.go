package watch_test

import (
	"context"
	"fmt"
	"os"

	"github.com/ckpt/ckpt/internal/watch"
)

// The engine's side of the protocol: ask for Changes before a save, walk
// what they name, and pass every directory to Watch before reading it.
func Example() {
	root, _ := os.MkdirTemp("", "ws")
	defer os.RemoveAll(root)
	w, err := watch.Start(context.Background(), root, watch.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close()

	// Before each save:
	c := w.Changes() // the first call after Start reports All
	if c.All {
		// Walk everything as without a watcher, calling Watch for every
		// captured directory read.
		w.Watch("")
		return
	}
	for _, dir := range c.Dirty {
		_ = dir // Watch(dir); lstat dir and its entries; walk new subdirectories
	}
	for _, sub := range c.Rescan {
		_ = sub // walk sub recursively, cache unused; Watch each directory first
	}
}
