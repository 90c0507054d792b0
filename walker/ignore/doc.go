// Package ignore implements gitignore pattern matching with git's exact
// semantics, for the walker and for callers that ask about single paths.
//
// # Pattern syntax (one pattern per line, as in git's dir.c)
//
//   - Blank lines and lines starting with '#' are skipped; "\#" starts a
//     pattern with a literal '#'.
//   - Trailing spaces are dropped unless escaped ("foo\ " keeps one).
//   - A leading '!' negates: a matching path is re-included ("\!" is a
//     literal '!'). A path below an excluded directory is never re-included,
//     because git does not look inside excluded directories.
//   - A trailing '/' makes the pattern match directories only (a symlink to
//     a directory is not a directory).
//   - A pattern without any other '/' matches the last component of a path
//     at any depth below the directory it was read in; a pattern with a
//     leading or inner '/' is anchored to that directory and matched
//     against the whole relative path.
//   - Globs follow git's wildmatch in pathname mode: '*' and '?' never cross
//     a '/', "**/" at the start, "/**" at the end and "/**/" in the middle
//     match any number of directories (zero included), any other "**" acts
//     as '*'; bracket expressions support ranges, "[!...]" / "[^...]"
//     negation, backslash escapes and the ASCII POSIX classes. Matching is
//     byte-wise and case-sensitive.
//   - A "\r" before the line end and a leading UTF-8 BOM are dropped.
//
// # Precedence
//
// Rules stacks pattern lists by Layer (lowest first: profile, filter=lfs
// patterns of .gitattributes, .git/info/exclude, .gitignore, .ckptignore,
// caller extras, forced exclusions) and by directory. A path is decided by
// the highest layer that has a matching pattern; within a layer deeper
// directories are consulted first and, within one file, the last matching
// line wins. This mirrors git, where command-line excludes beat .gitignore
// files (deepest first), which beat info/exclude.
//
// Matcher applies all of this to a workspace on disk, reading the
// per-directory files lazily, and also excludes every ".git" component.
//
// # Stability
//
// ignore is a public package: Matcher and the pattern syntax keep git's
// meaning, exactly, within a major version of the module; a divergence
// from git is a bug, fixed by following git. It imports nothing of ckpt.
package ignore
