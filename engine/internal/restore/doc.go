// Package restore holds the mechanics of a restore: the plan that turns
// the current tree into the target tree, the applier that carries it out
// inside the workspace (atomic writes, conflicts for what no checkpoint
// captures, durability before it returns) and the file-system seam both
// it and the restore journal write through. Package engine decides what
// to restore and keeps the journal; this package never sees the index.
package restore
