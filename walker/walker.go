package walker

import (
	"context"
	"runtime"
)

// DefaultMaxFileSize is the size cap the engine applies by default: larger
// files are skipped and reported.
const DefaultMaxFileSize = 100 << 20

// Kind is the type of an included entry. The values match objects.Kind.
type Kind uint8

// Entry kinds.
const (
	KindFile    Kind = 1
	KindSymlink Kind = 2
	KindDir     Kind = 3
)

// Entry is one included name of a directory, with the lstat data taken
// while the directory was listed.
//
// A stat cache treats a file as unchanged when Size, MtimeNs, CtimeNs, Ino,
// Dev and Mode all equal the recorded ones (and the racy rule holds: the
// mtime is older than the recording). What the fields hold per OS:
//
//   - Linux, macOS: st_size, st_mtime, st_ctime (inode change time, which
//     no user call can set back), st_ino, st_dev and st_mode & 07777.
//   - Windows: EndOfFile, LastWriteTime, ChangeTime (the NTFS change time,
//     bumped by every write, rename and attribute change; not the creation
//     time), the file ID as Ino and the volume serial number as Dev, all
//     taken from the directory listing (FileIdBothDirectoryInfo) without
//     opening the file. Mode is synthesised from the attributes, since
//     Windows has no permission bits: 0o755 for a directory, 0o444 for a
//     read-only file, 0o644 otherwise; the exec bit never shows, so a
//     caller that must keep one across saves on Windows carries it over
//     from its previous record. Times are converted to ns since 1970.
type Entry struct {
	Name             string
	Kind             Kind
	Mode             uint32 // permission bits (see above)
	Size             int64  // bytes of a file or of a symlink's target text; 0 for a directory
	MtimeNs, CtimeNs int64
	Ino, Dev         uint64
	// Nlink is the number of hard links to the entry; 0 where the
	// platform's listing does not tell (Windows).
	Nlink  uint32
	Target string // symlink target text (on Windows with '/' separators), "" otherwise
}

// Dir is one included directory.
type Dir struct {
	Path    string  // slash-separated, relative to the root; "" for the root
	Mode    uint32  // the directory's permission bits
	Entries []Entry // included entries only, sorted by Name bytes
	// Pruned is set when Options.Prune vouched for this directory: the
	// walker neither opened nor listed it, and Entries is nil.
	Pruned bool
	// Replayed is set when Entries came from Options.Replay instead of a
	// listing (see there for which of them the walker read again).
	Replayed bool
	// ExcludedRuleLinked is set when a pattern file of the directory that
	// its rules exclude (a .gitignore may exclude itself), and so is not in
	// Entries, has another hard link, as far as the walker looked it up: a
	// write through that link changes what the directory captures with no
	// change to the directory. (An included one is in Entries, with its
	// Nlink.)
	ExcludedRuleLinked bool
	// Unreadable names the entries left out of Entries because they could
	// not be read (a file it may not read, a directory it may not list or
	// enter; reported in Skipped as ReasonUnreadable), in no set order: the
	// caller may keep what it knew of them. An entry that vanished or
	// changed type while the walk ran is not among them.
	Unreadable []string
}

// Skip reasons reported in Skipped.Reason.
const (
	ReasonFIFO       = "fifo"
	ReasonSocket     = "socket"
	ReasonDevice     = "device"
	ReasonTooLarge   = "too large"
	ReasonUnreadable = "unreadable"
	ReasonVanished   = "vanished" // replaced by another type of file while the walk ran
	ReasonOther      = "unknown type"
)

// Skipped is a path that was not ignored but could not be included.
type Skipped struct {
	Path   string // slash-separated, relative to the root
	Reason string // one of the Reason constants
	Err    error  // the underlying error for unreadable and vanished paths
}

// Options configures Walk. The zero value walks with the default profile,
// no size cap and GOMAXPROCS workers.
type Options struct {
	// Profile selects the built-in exclusions: "default" (also for ""),
	// "cline", "roo" or "none". Any other value is an error.
	Profile string
	// Extra holds gitignore-syntax patterns relative to the root, with the
	// highest precedence (they may re-include what .gitignore excludes).
	Extra []string
	// MaxFileSize skips and reports larger files; 0 means no cap.
	MaxFileSize int64
	// ExcludeDirs are directories (the store) left out, silently, when
	// they lie inside the root. They are matched by device and inode, so any
	// path spelling works; a directory that does not exist yet is ignored.
	ExcludeDirs []string
	// Workers bounds the goroutines that list and visit directories.
	// 0 means runtime.GOMAXPROCS(0), and at least 2 so IO overlaps.
	Workers int
	// Prune, when set, is asked for every included subdirectory (never the
	// root) before it is opened. When it returns true the walker does not
	// open, list or descend into it, and visits it at once with Dir.Pruned
	// set: the caller vouches that nothing below it changed since it last
	// read it, so skipped paths below it are not reported either. It is
	// called concurrently from the walk's goroutines.
	Prune func(rel string) bool
	// Replay, when set, is asked for every directory about to be listed
	// (the root too). When it returns entries (sorted by Name, with the
	// data of a past listing), the walker reads the directory's ignore-rule
	// files but does not list it: those entries stand for its listing, but
	// for the names in changed (sorted), which are looked up again
	// (lstatted, and left out when gone, ignored or skipped, as a listing
	// would), and only its symlinks and the subdirectories Prune does not
	// vouch for are lstatted again (a subdirectory's own attributes, a
	// symlink's target). The walker may reorder and overwrite entries.
	// The caller vouches that no entry of the directory other than those
	// of changed was created, removed, renamed or changed since that
	// listing, and that the ignore rules in effect there are the same; it
	// may still vouch for nothing below the directory. Skipped paths of
	// the directory are reported again only for the names of changed. It
	// is called concurrently from the walk's goroutines.
	Replay func(rel string) (entries []Entry, changed []string, ok bool)

	hooks *hooks // test-only fault injection
}

func (o *Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return max(runtime.GOMAXPROCS(0), 2)
}

// VisitFunc is called once per included directory; see Walk.
type VisitFunc[T any] func(ctx context.Context, d *Dir, sub map[string]T) (T, error)

// Walk walks the workspace at root and returns the value visit returned for
// the root directory, together with the skipped paths sorted by path.
//
// For every included directory visit is called exactly once, after visit
// has returned for all of its included subdirectories, with those values
// keyed by subdirectory name (sub is never nil). Visit calls for different
// directories run concurrently, on at most Options.Workers goroutines; d and
// sub belong to visit for the duration of the call and are dropped after
// it, so memory is bounded by the directories in flight, not by the tree.
// The directory entries handed to visit are final: a subdirectory that
// turned out to be unreadable is removed from its parent's entries (and
// reported) before the parent is visited.
//
// The first error returned by visit, or the cancellation of ctx, stops the
// walk; Walk then returns that error, and no goroutine outlives Walk. Walk
// fails with ErrProtected for protected workspaces (see CheckWorkspace),
// ErrUnknownProfile for a bad profile, and with the open or read error of
// the root directory itself; unreadable subdirectories and files are
// reported in the skipped list instead.
func Walk[T any](ctx context.Context, root string, opts Options, visit VisitFunc[T]) (T, []Skipped, error) {
	var zero T
	if err := CheckWorkspace(root); err != nil {
		return zero, nil, err
	}
	cfg, err := newConfig(root, &opts)
	if err != nil {
		return zero, nil, err
	}
	return run(ctx, cfg, visit)
}
