// Package walker decides what a checkpoint holds: it walks a workspace in
// parallel, one directory at a time, applying git's ignore rules, the
// exclusion profile and the caller's patterns, and hands each directory's
// sorted entries to a visitor bottom-up so the caller can build Merkle trees
// and consult a per-directory stat cache. The walker never reads file
// contents, never follows symlinks, never opens anything below a .git
// (except the workspace repository's .git/info/exclude) and never opens
// sockets, FIFOs or devices.
//
// What is left out, lowest precedence first (a later source may re-include
// with "!" what an earlier one excluded): the exclusion profile, the
// filter=lfs patterns of .gitattributes files at every level, the
// workspace repository's .git/info/exclude, .gitignore files at every level
// (deeper first), .ckptignore files at every level (deeper first), and
// Options.Extra. Matching follows git exactly (see package ignore), so
// nothing below an excluded directory is ever re-included. Independently of
// patterns, every .git directory or file, the ExcludeDirs, files over
// MaxFileSize, special files and unreadable paths are left out; the last
// three are reported as Skipped.
//
// # Stability
//
// walker is a public package: what it exports (Walk, its Options and
// visitor, the profiles and their patterns, CheckWorkspace) keeps its meaning within a major
// version of the module, and what a save captures under a profile changes
// only with a release note. It imports nothing of ckpt but walker/ignore,
// so a program may use it to list a workspace as ckpt would save it.
package walker
