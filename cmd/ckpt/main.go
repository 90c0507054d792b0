// Command ckpt saves, lists, diffs and restores checkpoints of a workspace.
// It binds flags and formats output; the work is done by package engine.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
