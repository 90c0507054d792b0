package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"
)

// DefaultRuleNames are the per-directory files whose change alters what a
// subtree captures.
var DefaultRuleNames = []string{".gitignore", ".ckptignore", ".gitattributes"}

// clockJumpLimit is how far the wall clock may drift from the monotonic
// clock between two Changes calls before the watcher stops vouching.
const clockJumpLimit = 2 * time.Second

// Options configures Start. The zero value watches with DefaultRuleNames
// and no rule files outside the tree.
type Options struct {
	// RuleNames are the file names that, changed in a watched directory,
	// make that directory's subtree a Rescan. Nil means DefaultRuleNames.
	RuleNames []string
	// RuleFiles are absolute paths of ignore-rule files that live outside
	// the captured directories (root/.git/info/exclude, the global
	// excludes file). A change to one of them, or to a missing ancestor
	// that would bring it into existence, reports All.
	RuleFiles []string
	// MaxPending, when positive, bounds the distinct directories one
	// interval between Changes calls may hold: an event that would exceed
	// it is handled as a queue overflow (All, every watch dropped), so a
	// change that touches a great part of the tree costs one full walk and
	// no memory per directory. Zero means no bound.
	MaxPending int
	// MaxWatches, when positive, caps the kernel watches this watcher
	// holds, leaving the rest of the user's inotify allowance to other
	// programs. Beyond it a directory is unwatched exactly as when the
	// kernel's per-user limit refuses its watch: reported dirty at every
	// Changes. Zero means only the kernel's limit.
	MaxWatches int
	// Written, when set, is told the root-relative path of each entry
	// that is not a directory as soon as an event shows it created,
	// written to or moved in, possibly several times for one change. It
	// is a hint for work that may be done ahead of the next save, never a
	// report to rely on: only the Linux backend gives it, and an entry
	// may change with no call (Changes is what reports every change). It
	// is called from the watcher's reader with the watcher's lock held, so
	// it must return at once and must not call the Watcher.
	Written func(rel string)
	// clock, when set, replaces the wall and monotonic clocks.
	clock func() (wall time.Time, mono time.Duration)
}

// Reason says why a Changes result is wider than the events themselves.
// It is a bit set; Changes.Reasons holds every reason of the interval.
type Reason uint16

// Reasons for All or Rescan.
const (
	ReasonStart       Reason = 1 << iota // first Changes after Start
	ReasonUnsupported                    // no watcher on this platform
	ReasonOverflow                       // the kernel queue overflowed
	ReasonReadError                      // reading or polling the queue failed
	ReasonClockJump                      // wall clock moved against the monotonic clock
	ReasonRootLost                       // the root was deleted, moved or unmounted
	ReasonRuleFile                       // an ignore-rule file changed
	ReasonNewDir                         // a directory was created or moved in
	ReasonDropped                        // the kernel dropped a watch
	ReasonUnwatched                      // a directory could not be watched
	ReasonClosed                         // the watcher is closed
	ReasonPeriodic                       // the backend's periodic full walk (see Stats.Provisional)
	ReasonMount                          // a file system was mounted or unmounted in the tree
)

var reasonNames = []string{"start", "unsupported", "overflow", "read-error", "clock-jump",
	"root-lost", "rule-file", "new-dir", "dropped", "unwatched", "closed", "periodic", "mount"}

// String names the reasons of r, joined by "|".
func (r Reason) String() string {
	var names []string
	for i, n := range reasonNames {
		if r&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, "|")
}

// Changes is what may have changed between two Changes calls. Dirty and
// Rescan are sorted, root-relative, slash-separated ("" is the root); no
// path of Dirty or Rescan lies below a path of Rescan. When All is set,
// Dirty, Rescan and Entries are empty.
type Changes struct {
	All    bool
	Dirty  []string // re-read the directory itself and its direct entries
	Rescan []string // walk recursively, trusting nothing cached below
	// Entries narrows Dirty: for some of its directories, the names of the
	// only entries that may have changed (created, removed, renamed,
	// written, truncated, chmodded, chowned or re-timed), sorted, at most
	// MaxEntryNames each. The directory's other entries did not change,
	// nor its own attributes but its times (which an entry created or
	// removed changes), so lstatting the directory and those names (a
	// name gone meaning the entry is) re-reads it. Only the inotify
	// backend names entries, and only files, symlinks and special files.
	Entries map[string][]string
	Reasons Reason
}

// Backend names, as Stats.Backend reports them.
const (
	BackendInotify  = "inotify"
	BackendRDCW     = "ReadDirectoryChangesW"
	BackendFSEvents = "FSEvents"
	BackendNone     = "none" // every Changes reports All; Stats.Fallback says why
)

// EnvBackend is the environment variable that, set to "none", makes Start
// return the always-walk backend on every platform (to measure or test
// the engine as it runs where no watcher exists).
const EnvBackend = "CKPT_WATCHER"

// Stats describes a watcher's resources and fallbacks since Start.
type Stats struct {
	Backend  string // one of the Backend names
	Fallback string // for BackendNone: why there is no watcher
	// Provisional is set for a backend that has not run in this project's
	// tests on its platform: it reports All on its own at least every
	// provisionalWalkEvery, so a missed event costs at most that long.
	Provisional bool
	Watches     int // kernel watches held for captured directories
	Unwatched   int // captured directories that could not be watched
	Overflows   int // queue overflows seen (the kernel's, or MaxPending exceeded)
	Resets      int // times every watch was dropped (overflow, read error, lost root)
}

// Watcher reports changed directories of one workspace. Its methods are
// safe for concurrent use.
type Watcher struct {
	b backend
}

// backend is the platform seam.
type backend interface {
	watch(rel string)
	changes() Changes
	stats() Stats
	close() error
}

// ErrNotDir is returned by Start when root is not a directory.
var ErrNotDir = errors.New("watch: root is not a directory")

// Start starts watching the workspace at root (an absolute path). It adds
// the root's watch; every other directory is watched through Watch. Start
// fails only when root is not a directory or ctx is done; when the
// platform or the kernel offers no watcher it returns one whose Changes
// always reports All.
func Start(ctx context.Context, root string, opts Options) (*Watcher, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("watch: start: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s", ErrNotDir, root)
	}
	if opts.RuleNames == nil {
		opts.RuleNames = DefaultRuleNames
	}
	if os.Getenv(EnvBackend) == BackendNone {
		return &Watcher{b: &walkAlways{why: ReasonUnsupported, detail: EnvBackend + "=none"}}, nil
	}
	if opts.clock == nil {
		start := time.Now()
		opts.clock = func() (time.Time, time.Duration) {
			now := time.Now()
			return now.Round(0), now.Sub(start)
		}
	}
	return &Watcher{b: newBackend(root, opts)}, nil
}

// Watch tells the watcher that the captured directory rel (root-relative,
// slash-separated, "" for the root) is about to be read: the caller must
// call it before it lists rel. From the moment Watch returns, changes in
// rel are reported, so a change either precedes the listing (which sees
// it) or raises an event; a directory read this way is not reported dirty
// at the next Changes unless something changed in it. Watch never fails:
// a directory that cannot be watched is reported dirty at every Changes
// instead.
func (w *Watcher) Watch(rel string) {
	w.b.watch(cleanRel(rel))
}

// Changes reports what may have changed since the previous call (since
// Start for the first call, which reports All). It includes every event of
// an operation that completed before the call; see the package doc.
func (w *Watcher) Changes() Changes {
	c := w.b.changes()
	normalizeChanges(&c)
	return c
}

// Stats returns the watcher's counters.
func (w *Watcher) Stats() Stats { return w.b.stats() }

// Close stops the watcher and releases its kernel resources; its reader
// goroutine has ended when Close returns. After Close, Changes reports All.
func (w *Watcher) Close() error { return w.b.close() }

// cleanRel turns rel into the canonical form used in Changes.
func cleanRel(rel string) string {
	rel = path.Clean("/" + rel)
	return strings.TrimPrefix(rel, "/")
}

// joinRel joins a root-relative directory and an entry name.
func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// parentRel returns the directory holding rel ("" for a top-level name).
func parentRel(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}
