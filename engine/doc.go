// Package engine is ckpt's public API: it binds a workspace to a
// content-addressed checkpoint store and saves, lists, diffs and restores
// checkpoints of it.
//
// A store (see Open for its location) holds any number of tasks; a task is a
// chain of checkpoints linked by parent, with a head and a sequence counter.
// All tasks share the store's content, so identical files are stored once.
// A workspace is one directory, or several (Options.Roots, a VS Code
// multi-root workspace): then one store and one checkpoint cover every
// root, each under its name, and one restore journal covers them all.
//
// Guarantees:
//   - Save is atomic: the pack data is fsynced before one synced index batch
//     makes the checkpoint, its trees and the new head visible together.
//   - Restore never deletes or overwrites a path the current state does not
//     capture, never writes outside the workspace, saves a backup checkpoint
//     first (unless told not to) and leaves a journal while it runs.
//   - One process uses a store at a time (an OS lock, held from Open to
//     Close); within the process an Engine is safe for concurrent use.
//   - Integrity failures of the store are reported as ErrCorrupt, never as
//     wrong bytes. ErrCorrupt is objects.ErrCorrupt: every layer marks the
//     damage it finds with it, and every such error an Engine returns is,
//     or wraps, a *CorruptError naming the store (or the remote) it is in.
package engine
