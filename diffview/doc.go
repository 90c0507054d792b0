// Package diffview computes and renders the changes between two trees.
//
// # Change sets
//
// Compare walks two trees side by side and skips every pair of subtrees
// whose ids are equal, so its cost grows with the size of the change, not
// with the size of the workspace. It reports one Change per file or symlink
// path; it never loads blob contents. Contents are loaded later, one change
// at a time, through a BlobLoader, so a host can list thousands of changed
// paths without reading their bytes.
//
// Conventions, chosen to match git where git has an opinion:
//
//   - Directories are never reported themselves. A directory that appears
//     or vanishes contributes the files and symlinks under it; an empty
//     directory appearing or vanishing is not a change, and neither is a
//     change of a directory's own mode bits.
//   - A path whose kind changes between file and symlink is one change with
//     status "typechange". A path that is a directory on one side and a
//     file or symlink on the other yields a "deleted"/"added" change for the
//     path itself plus one change per entry under the directory.
//   - A deleted path whose blob id and kind reappear at an added path is
//     paired into one "renamed" change (an exact, 100% rename); mode bits may
//     differ. Candidates are paired in path order. Path filters apply before
//     pairing, as git's pathspecs do.
//   - Mode bits of symlinks are ignored. Any other difference in a file's
//     mode bits is a change ("mode", or part of "modified"), because a
//     restore would change them; git only sees the executable bit, so a mode
//     change that leaves the git mode (100644/100755) unchanged is listed by
//     WriteStat and WriteNameStatus but has nothing to show in WritePatch,
//     which omits it.
//
// # Content
//
// A side is binary when its first 8000 bytes contain a NUL byte (git's
// rule); a change is binary when either side is. Text whose size exceeds
// Options.MaxBytes or whose line count exceeds Options.MaxLines on either
// side (defaults 1 MiB and 20,000 lines) is "too large": it is not diffed
// line by line, the patch shows it like a binary file (`Binary files a/x and
// b/x differ`), WriteStat shows its byte sizes, and Describe sets TooLarge
// and leaves Before and After nil. The size test uses the sizes recorded in
// the trees, so over-limit blobs are never loaded whole when the loader
// implements BlobPrefixLoader.
//
// # Patch format
//
// WritePatch writes git's extended unified format: `diff --git` headers,
// mode lines, `new file mode`/`deleted file mode`, `similarity index 100%`
// with `rename from`/`rename to`, an `index` line carrying the short ckpt
// blob ids (BLAKE3, not git object names, except that empty content is
// named by git's empty-blob id, which GNU patch needs to delete empty
// files), hunks with 3 lines of context
// and `\ No newline at end of file` markers, and paths quoted as git quotes
// them with core.quotePath set. Line endings are preserved byte for byte.
// The output applies with `git apply` to the "from" state and yields the
// "to" state, except for binary and too-large files, whose bytes are never
// printed: git apply must be told to skip them (`--exclude`). GNU `patch
// -p1` applies it too, within that tool's limits: it skips binary files,
// cannot rename symlinks, and removes files only after creating others, so a
// file replacing a directory (or the reverse) in one patch defeats it.
//
// # Stability
//
// diffview is a public package: Compare, Change, the path filters and the
// patch, stat and name-status writers keep their meaning and output
// within a major version of the module. It reads trees through TreeSource
// and contents through BlobLoader and imports objects only (no Pebble), so
// any store of objects.Tree values can be compared with it.
package diffview
