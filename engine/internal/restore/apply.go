package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ckpt/ckpt/internal/osfs"
	"github.com/ckpt/ckpt/objects"
)

// Blobs reads the content a restore writes.
type Blobs interface {
	Open(id objects.ID) (io.ReadCloser, int64, error)
	Get(id objects.ID) ([]byte, error)
}

// Result is what a restore did (or, for a preview, would do).
type Result struct {
	Written   []string // files and symlinks written (or modes changed)
	Deleted   []string // files, symlinks and directories removed
	Conflicts []Conflict
	// Swept counts the temporaries of an interrupted restore (inTemp,
	// not foreign) that its completion removed: the restore's own leftovers,
	// not the user's paths, so they are not in Deleted.
	Swept int
	// Discarded lists what Force destroyed that no checkpoint holds: the
	// files, symlinks and empty directories an uncaptured obstacle or a
	// replaced directory held, and the paths whose unsaved or unread
	// content Force replaced or removed.
	Discarded []string
}

// Conflict is a path the restore left alone, and why.
type Conflict struct {
	Path   string
	Kind   ConflictKind
	Reason string
}

// ConflictKind says why a restore left a path alone.
type ConflictKind string

// Conflict kinds.
const (
	ConflictUncaptured   ConflictKind = "uncaptured"
	ConflictUnsaved      ConflictKind = "unsaved"
	ConflictUnread       ConflictKind = "unread"
	ConflictDirHolds     ConflictKind = "dir-holds"
	ConflictBlockedBelow ConflictKind = "blocked-below"
	ConflictFault        ConflictKind = "fault"
	ConflictChanged      ConflictKind = "changed"
)

// Applier carries out a restore plan inside the workspace, writing only
// through the restore seam. Fill in its exported fields, then call Apply
// or Preview once.
type Applier struct {
	FS    FS
	Blobs Blobs
	Force bool
	// Unsaved, when set (restores without a backup of the current state),
	// holds the paths whose current entry no checkpoint captures
	// identically: a restore leaves them alone (a conflict) unless Force.
	Unsaved map[string]bool
	// Unread holds the paths the scan of the current state could not read
	// (a file it may not read, a directory it may not list): what they
	// hold now is in no checkpoint (the current state keeps the version
	// last read), so a restore leaves them, and all below them, alone (a
	// conflict) unless Force.
	Unread map[string]bool
	// Resuming: this run completes an interrupted restore, whose
	// temporary files are removed whatever the guard says (those that
	// TempsSince does not show to be a user's).
	Resuming bool
	// Scanned, when set, says what the scan of the current state (the
	// backup's) saw of a path, when it can tell: a file whose size,
	// modification time or inode differ now changed after that scan read
	// it, and is in no checkpoint; the restore leaves it alone (a conflict,
	// ConflictChanged), as it leaves one changed while it writes.
	Scanned func(rel string) (ScannedStat, bool)
	// TempsSince, when set, is when the interrupted restore whose
	// temporaries this run removes began (its journal's Started). A path
	// with a temporary's name (TempPrefix, a number, "-", a number) last
	// changed before then is not one of them but a user's, named alike
	// (see foreign): a sweep leaves it alone, and the guard protects it
	// as any other path.
	TempsSince time.Time
	// Export: the applier writes an export's directory, not the
	// workspace; its temporaries are named apart from a restore's
	// (exportTempPrefix), which a sweep removes.
	Export bool
	// NameProblem, when set, says why the workspace's file system cannot
	// hold a name ("" when it can); such paths become conflicts.
	NameProblem func(name string) string
	// Alongside, when set, runs on a goroutine of its own while Apply
	// makes its last changes durable (the final syncfs, or the syncs of
	// the directories it changed), after every file is in place; Apply
	// returns its error as it returns the sync's. A restore moves the
	// task's head there: the index's commit and the workspace's last flush
	// then wait on the disk together instead of one after the other.
	Alongside func() error
	Result    Result
	// Timing is where Apply's time went, filled in as it goes (a failed
	// Apply fills the phases it ended).
	Timing Timing
	// syncEach makes every written file durable (fdatasync) before its
	// rename and every touched directory after the renames; where SyncAll
	// is sound, large restores, resumed ones, and any restore while it is
	// cheap instead stage
	// every file under its temporary name, make them all durable with one
	// syncfs, rename them into place and end with a second syncfs.
	syncEach bool

	mu      sync.Mutex      // guards Result, blocked, dirs, made, staged, held, spaceFreed and aged
	blocked []string        // paths (and their subtrees) left alone because of a conflict
	dirs    map[string]bool // directories whose entries this restore changed
	made    map[string]bool // directories this restore created
	staged  []staged        // files and links written, not yet renamed into place (!syncEach)
	held    []io.Closer     // files replaced or removed, let go once Apply ends (see FS.Hold)
	// seen is what stood at each path a write replaces, looked up before
	// the first write (nil: nothing stood there), which its rename
	// requires still to stand (see unchangedSince).
	seen map[string]fs.FileInfo
	// spaceFreed is set once a write that found the disk full let go of
	// the held files (see freedSpace).
	spaceFreed bool
	// subtrees maps the root of each fresh subtree (a directory the
	// restore creates in one it did not) to the temporary name it is
	// made under, without syncEach: what the restore puts below it is
	// made at its own name there, and the subtree's one rename places it
	// all, after the syncfs. Written by the directories' step only.
	subtrees map[string]string
	inside   []string        // the files and links written inside subtrees (guarded by mu)
	aged     map[string]bool // foreign's answers, by temporary
}

// maxHeld bounds the files a restore holds: far below the open files a
// process may have, and more than an agent's step changes.
const maxHeld = 1024

// staged is a file or symlink written under its temporary name, waiting
// for the syncfs that makes it durable before its rename onto o.path.
type staged struct {
	o   op
	tmp string
}

// conflictReasons explain each kind of conflict, for the user.
var conflictReasons = map[ConflictKind]string{
	ConflictUncaptured:   "a file not captured by any checkpoint (ignored, skipped or unsaved) stands here",
	ConflictUnsaved:      "the current content is not captured by a checkpoint (an unsaved edit or a new file) and no backup is taken",
	ConflictUnread:       "the current content could not be read, so no checkpoint holds it",
	ConflictDirHolds:     "the directory holds files not captured by any checkpoint",
	ConflictBlockedBelow: "the directory still holds paths the restore left alone (see their conflicts)",
	ConflictChanged:      "the path changed while the restore ran, after its backup read it; it keeps its new content",
}

// faultReason explains a path the restore could not change (permission
// denied, or held open by another program): the path keeps what it held,
// the rest of the restore goes on.
func faultReason(err error) string {
	if sv := (*SharingViolationError)(nil); errors.As(err, &sv) {
		return fmt.Sprintf("could not replace this path: %v; it keeps its current content", sv)
	}
	if su := (*SymlinkUnsupportedError)(nil); errors.As(err, &su) {
		return fmt.Sprintf("%v; it keeps its current content", su)
	}
	return fmt.Sprintf("could not change this path (%v); it keeps its current content", err)
}

// pathFault reports whether err concerns only the path it names (permission
// denied, another program holding it open, no symlinks here, a path too
// long for the file system), so the restore records a conflict and goes
// on; any other error (no space, I/O) stops the restore, which stays
// resumable.
func pathFault(err error) bool {
	var sv *SharingViolationError
	var su *SymlinkUnsupportedError
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENAMETOOLONG) || errors.As(err, &sv) || errors.As(err, &su)
}

// specialModes pairs the stored mode bits beyond the permissions (the
// POSIX values) with os.FileMode's.
var specialModes = [...]struct {
	bit  uint32
	mode os.FileMode
}{{0o4000, os.ModeSetuid}, {0o2000, os.ModeSetgid}, {0o1000, os.ModeSticky}}

// fileMode converts stored permission bits to an os.FileMode.
func fileMode(perm uint32) os.FileMode {
	m := os.FileMode(perm & 0o777)
	for _, s := range specialModes {
		if perm&s.bit != 0 {
			m |= s.mode
		}
	}
	return m
}

// permBits is fileMode's inverse: the stored (and POSIX) bits of m.
func permBits(m os.FileMode) uint32 {
	perm := uint32(m.Perm())
	for _, s := range specialModes {
		if m&s.mode != 0 {
			perm |= s.bit
		}
	}
	return perm
}

func (x *Applier) isBlocked(rel string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, b := range x.blocked {
		if rel == b || strings.HasPrefix(rel, b+"/") {
			return true
		}
	}
	return false
}

// blockedBelow reports whether a conflict left something under directory rel.
func (x *Applier) blockedBelow(rel string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, b := range x.blocked {
		if strings.HasPrefix(b, rel+"/") {
			return true
		}
	}
	return false
}

func (x *Applier) conflict(rel string, kind ConflictKind) {
	x.conflictWhy(rel, kind, conflictReasons[kind])
}

func (x *Applier) conflictWhy(rel string, kind ConflictKind, reason string) {
	x.mu.Lock()
	x.Result.Conflicts = append(x.Result.Conflicts, Conflict{Path: rel, Kind: kind, Reason: reason})
	x.blocked = append(x.blocked, rel)
	x.mu.Unlock()
}

// record lists rel as done and marks its directory as changed.
func (x *Applier) record(list *[]string, rel string) {
	x.mu.Lock()
	*list = append(*list, rel)
	x.dirs[path.Dir(rel)] = true
	x.mu.Unlock()
}

// fault turns a permission error on one path into a conflict; other
// errors come back wrapped, to stop the restore.
func (x *Applier) fault(op, rel string, err error) error {
	if pathFault(err) {
		x.conflictWhy(rel, ConflictFault, faultReason(err))
		return nil
	}
	return fmt.Errorf("%s %s: %w", op, rel, err)
}

// guarded says why o would destroy current content that no checkpoint
// captures ("" when it would not): content the restore's scan could not
// read (Unread), or, restoring without a backup, unsaved content
// (Unsaved). Such a path becomes a conflict unless Force.
func (x *Applier) guarded(o op) ConflictKind {
	if x.Force {
		return ""
	}
	return x.protects(o)
}

// forcedOver reports whether o destroys content no checkpoint captures,
// going ahead only because of Force: what the result lists as Discarded.
func (x *Applier) forcedOver(o op) bool { return x.Force && x.protects(o) != "" }

// protects says why o would destroy current content that no checkpoint
// captures, Force or not ("" when it would not): see guarded.
func (x *Applier) protects(o op) ConflictKind {
	if o.fresh || o.kind == opMkdir {
		return ""
	}
	if x.unread(o.path) {
		return ConflictUnread
	}
	if x.Unsaved == nil || o.kind == opRemoveDir || !x.Unsaved[o.path] {
		return ""
	}
	if x.Resuming && inTemp(o.path) && !x.foreign(o.path) {
		return ""
	}
	return ConflictUnsaved
}

// unread reports whether rel or a directory above it is in Unread.
func (x *Applier) unread(rel string) bool {
	if len(x.Unread) == 0 {
		return false
	}
	for p := rel; ; p = path.Dir(p) {
		if x.Unread[p] {
			return true
		}
		if !strings.Contains(p, "/") {
			return false
		}
	}
}

// tempClockSlack is how long before TempsSince a temporary of the
// interrupted restore may seem to have been changed: file systems keep
// modification times coarser than the clock the journal's Started was
// read from (FAT to 2 s), so only a path changed longer before than that
// is surely not the restore's.
const tempClockSlack = 2 * time.Second

// foreign reports whether rel, which lies in a temporary (inTemp), is a
// user's path named alike: TempsSince is set, and the outermost element
// of rel named as a temporary (the one the restore would have made: a
// file beside its target, or a fresh subtree's root, in which the files
// bear their own names) was last changed before TempsSince, less
// tempClockSlack. A path it cannot look up is not foreign.
func (x *Applier) foreign(rel string) bool {
	if x.TempsSince.IsZero() {
		return false
	}
	tmp := ""
	for name := range strings.SplitSeq(rel, "/") {
		tmp = path.Join(tmp, name)
		if isTempName(name) {
			break
		}
	}
	x.mu.Lock()
	aged, ok := x.aged[tmp]
	x.mu.Unlock()
	if ok {
		return aged
	}
	fi, err := x.FS.Lstat(tmp)
	aged = err == nil && fi.ModTime().Before(x.TempsSince.Add(-tempClockSlack))
	x.mu.Lock()
	if x.aged == nil {
		x.aged = map[string]bool{}
	}
	x.aged[tmp] = aged
	x.mu.Unlock()
	return aged
}

// inTemp reports whether rel is a temporary file or symlink of a restore,
// or lies in a temporary directory of one (a fresh subtree).
func inTemp(rel string) bool {
	for name := range strings.SplitSeq(rel, "/") {
		if isTempName(name) {
			return true
		}
	}
	return false
}

// stands reports whether something stands at rel: after clear, a
// directory the restore merges into rather than makes.
func (x *Applier) stands(rel string) bool {
	_, err := x.FS.Lstat(rel)
	return err == nil
}

// inSubtree returns where rel is made while its fresh subtree waits for
// its rename: under the subtree's temporary name; ok is false for a path
// in no subtree.
func (x *Applier) inSubtree(rel string) (at string, ok bool) {
	if len(x.subtrees) == 0 {
		return "", false
	}
	for d := rel; d != "."; d = path.Dir(d) {
		if tmp, ok := x.subtrees[d]; ok {
			return tmp + rel[len(d):], true
		}
	}
	return "", false
}

// obstructed reports whether an uncaptured item stands where a fresh
// creation goes. An existing directory does not obstruct a directory: the
// restore merges into it. Nothing obstructs a creation in a directory this
// restore created: it was empty, and holds only what the restore put there
// (a clone into an empty directory looks nothing up). A file another
// program drops into such a directory while the restore runs is replaced,
// as one dropped anywhere between a lookup and the rename would be.
func (x *Applier) obstructed(o op) bool {
	if !o.fresh {
		return false
	}
	x.mu.Lock()
	inMade := x.made[path.Dir(o.path)]
	x.mu.Unlock()
	if inMade {
		return false
	}
	fi, err := x.FS.Lstat(o.path)
	if err != nil {
		return false
	}
	return !(o.kind == opMkdir && fi.IsDir())
}

// clear handles an obstructed creation: with force the obstacle is removed,
// otherwise the path becomes a conflict. It reports whether to go on.
func (x *Applier) clear(o op) (bool, error) {
	if !x.obstructed(o) {
		return true, nil
	}
	if !x.Force {
		x.conflict(o.path, ConflictUncaptured)
		return false, nil
	}
	gone := x.leaves(o.path)
	if err := x.FS.RemoveAll(o.path); err != nil {
		return false, x.fault("remove", o.path, err)
	}
	x.discarded(gone...)
	return true, nil
}

// leaves lists the files, symlinks and empty directories at and below
// rel, and rel itself when it cannot list a directory: what removing rel
// whole destroys.
func (x *Applier) leaves(rel string) []string {
	var out []string
	var walk func(p string)
	walk = func(p string) {
		if fi, err := x.FS.Lstat(p); err == nil && fi.IsDir() {
			if names, err := x.FS.DirNames(p); err == nil && len(names) > 0 {
				for _, n := range names {
					walk(path.Join(p, n))
				}
				return
			}
		}
		out = append(out, p)
	}
	walk(rel)
	return out
}

// discarded records paths as Discarded.
func (x *Applier) discarded(paths ...string) {
	x.mu.Lock()
	x.Result.Discarded = append(x.Result.Discarded, paths...)
	x.mu.Unlock()
}

// Preview fills the result with what Apply would do, touching nothing:
// it decides each step as Apply does, against the workspace as it stands
// and the removals Apply would have made before that step, so that a
// directory to remove that holds something else (an uncaptured file, a
// path left alone) is reported as Apply leaves it. Only what Apply learns
// from a change it tries (a permission denied) is not foreseen.
func (x *Applier) Preview(p *Plan) {
	x.clashConflicts(p)
	gone := map[string]bool{} // the paths the removals before this one remove
	for _, o := range p.removes {
		if x.previewRemove(o, gone) {
			gone[o.path] = true
			if x.sweeps(o) {
				x.Result.Swept++
			} else {
				x.Result.Deleted = append(x.Result.Deleted, o.path)
			}
			if x.forcedOver(o) {
				x.discarded(o.path)
			}
		}
	}
	for _, list := range [][]op{p.mkdirs, p.writes} {
		for _, o := range list {
			if x.isBlocked(o.path) || x.badName(o) {
				continue
			}
			obstructed := x.obstructed(o)
			switch guard := x.guarded(o); {
			case guard != "":
				x.conflict(o.path, guard)
			case obstructed && !x.Force:
				x.conflict(o.path, ConflictUncaptured)
			default:
				if obstructed {
					x.discarded(x.leaves(o.path)...)
				} else if x.forcedOver(o) && o.kind != opChmod {
					x.discarded(o.path)
				}
				if o.kind != opMkdir {
					x.Result.Written = append(x.Result.Written, o.path)
				}
			}
		}
	}
	x.sortResult()
}

// previewRemove decides removal o as remove would, the paths in gone
// removed before it, and reports whether o's path would be removed.
func (x *Applier) previewRemove(o op, gone map[string]bool) bool {
	if !x.mayRemove(o) {
		return false
	}
	if o.kind == opRemove {
		_, err := x.FS.Lstat(o.path)
		return !errors.Is(err, fs.ErrNotExist)
	}
	names, err := x.FS.DirNames(o.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false
	case err != nil:
		return true // Apply tries, and finds out
	}
	for _, name := range names {
		if !gone[path.Join(o.path, name)] {
			if !x.notEmpty(o) {
				return false
			}
			for _, leaf := range x.leaves(o.path) {
				if !goneWith(leaf, o.path, gone) {
					x.discarded(leaf)
				}
			}
			return true
		}
	}
	return true
}

// goneWith reports whether rel, below dir, or a directory between them is
// in gone: a removal before dir's removes it.
func goneWith(rel, dir string, gone map[string]bool) bool {
	for p := rel; p != dir && p != "."; p = path.Dir(p) {
		if gone[p] {
			return true
		}
	}
	return false
}

// syncEachLimit is the largest restore whose files may be synced one by
// one. syncfs flushes every dirty page of the whole filesystem, whoever
// wrote it (seconds, after a big build), so small restores, the common
// case, sync only what they wrote unless the system holds little unwritten
// data (FS.SyncAllState); beyond this many files one syncfs is cheaper.
const syncEachLimit = 512

// syncingWriters bounds the files written at once when each is synced: a
// writer then mostly waits in fdatasync, and many syncs in flight let the
// file system commit its journal once for several of them, where a bound
// set by the cores would queue them a few at a time.
const syncingWriters = 32

// writers is how many files Apply writes at once.
func (x *Applier) writers() int {
	if x.syncEach {
		return syncingWriters
	}
	return 2 * runtime.GOMAXPROCS(0)
}

// Apply carries out the plan: removals, directories, contents in parallel,
// directory modes. Everything it changed is durable before it returns (and
// so before the journal is cleared), and no path is ever renamed onto
// before its new content is durable, so a power cut leaves each path with
// its old content or its new one (and temporary files, which completing
// the restore with a plan that sweeps them removes, as Sweep's does when
// the restore is dropped instead): each file is synced before its rename and each changed
// directory once after, or, where syncfs is sound, for large and resumed
// restores and whenever syncfs is cheap, every file is written under its
// temporary name, one syncfs makes them durable, the renames follow and a
// second syncfs ends the restore; there, a fresh subtree (a directory the
// restore creates in one it did not) is made under a temporary name with
// everything below it at its own name, and renamed into place with the
// files: a clone of 90,000 files renames a few directories, not every
// file. A path it may not change (permission denied) becomes a conflict
// and the rest goes on; any other error stops it.
func (x *Applier) Apply(ctx context.Context, p *Plan) error {
	defer x.letGo()
	lap := Laps()
	sound, cheap := x.FS.SyncAllState()
	x.syncEach = !sound || len(p.writes) <= syncEachLimit && !x.Resuming && !cheap
	x.dirs, x.made, x.staged = map[string]bool{}, map[string]bool{}, nil
	x.subtrees, x.inside = map[string]string{}, nil
	x.clashConflicts(p)
	x.lookBefore(p)
	for _, o := range p.dirModes {
		if o.opens {
			if err := x.dirMode(o); err != nil {
				return err
			}
		}
	}
	for _, o := range p.removes {
		if err := x.remove(o); err != nil {
			return err
		}
	}
	for _, o := range p.mkdirs {
		if err := x.mkdir(o); err != nil {
			return err
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(x.writers())
	for _, o := range p.writes {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return x.write(o) })
	}
	err := g.Wait()
	x.Timing.Write = lap()
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = x.placeStaged(ctx)
	}
	if err != nil {
		x.dropStaged()
		return err
	}
	for _, o := range p.dirModes {
		if o.opens {
			continue // set before the writes
		}
		if err := x.dirMode(o); err != nil {
			return err
		}
	}
	x.sortResult()
	x.Timing.Place = lap()
	err = x.finish()
	x.Timing.Flush = lap()
	return err
}

// dirMode sets directory o's mode, unless a conflict left it alone; a
// directory gone meanwhile has none to set.
func (x *Applier) dirMode(o op) error {
	if x.isBlocked(o.path) {
		return nil
	}
	switch err := x.FS.Chmod(o.path, fileMode(o.ent.Mode)); {
	case err == nil: // its mode: the directory's own sync (syncEach) writes it
		x.mu.Lock()
		x.dirs[o.path] = true
		x.mu.Unlock()
	case !errors.Is(err, os.ErrNotExist):
		return x.fault("chmod", o.path, err)
	}
	return nil
}

// finish makes the restore's last changes durable (sync) with Alongside,
// when set, running beside it, and returns the first error of the two.
func (x *Applier) finish() error {
	if x.Alongside == nil {
		return x.sync()
	}
	var both errgroup.Group
	both.Go(x.Alongside)
	both.Go(x.sync)
	return both.Wait()
}

// sync makes the restore's directory changes durable: each changed
// directory once, all of them in flight together (as the files were), or,
// without syncEach, the whole file system (the syncfs after the renames).
func (x *Applier) sync() error {
	if !x.syncEach {
		if err := x.FS.SyncAll(); err != nil {
			return fmt.Errorf("sync workspace: %w", err)
		}
		return nil
	}
	dirs := make([]string, 0, len(x.dirs))
	for d := range x.dirs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	var g errgroup.Group
	g.SetLimit(syncingWriters)
	for _, d := range dirs {
		g.Go(func() error {
			// A directory the restore removed (or replaced) is gone: its
			// parent's sync records that.
			if err := x.FS.SyncDir(d); err != nil && !errors.Is(err, os.ErrNotExist) && !osfs.IsNotDir(err) {
				return fmt.Errorf("sync workspace: %w", err)
			}
			return nil
		})
	}
	return g.Wait()
}

// mayRemove reports whether removal o goes ahead: not below a path left
// alone, not a sweep's of a user's path named as a temporary (foreign),
// and not of unsaved content (a conflict).
func (x *Applier) mayRemove(o op) bool {
	if x.isBlocked(o.path) || o.swept && x.foreign(o.path) {
		return false
	}
	if kind := x.guarded(o); kind != "" {
		x.conflict(o.path, kind)
		return false
	}
	return true
}

// notEmpty decides the removal of directory o, which still holds paths
// the plan does not remove (uncaptured files, paths left alone): it stays,
// unless the target needs the path for something else; then it is a
// conflict, or, with Force, removed with all it holds (removeAll).
func (x *Applier) notEmpty(o op) (removeAll bool) {
	if !o.replaced {
		return false
	}
	if !x.Force {
		kind := ConflictDirHolds
		if x.blockedBelow(o.path) {
			kind = ConflictBlockedBelow
		}
		x.conflict(o.path, kind)
		return false
	}
	return true
}

func (x *Applier) remove(o op) error {
	if !x.mayRemove(o) {
		return nil
	}
	if o.kind == opRemove {
		x.hold(o.path)
	}
	swept := x.sweeps(o) // before the removal: foreign looks the path up
	forced := x.forcedOver(o)
	err := x.FS.Remove(o.path)
	switch {
	case err == nil:
		x.recordRemoval(o.path, swept)
		if forced {
			x.discarded(o.path)
		}
		x.mu.Lock()
		delete(x.dirs, o.path) // gone: its parent's sync records that
		x.mu.Unlock()
		return nil
	case errors.Is(err, os.ErrNotExist):
		return nil // already gone: a resumed restore
	case o.kind == opRemoveDir && osfs.IsDirNotEmpty(err):
		if !x.notEmpty(o) {
			return nil
		}
		// What it still holds, the plan's removals below it done, no
		// checkpoint captures.
		gone := x.leaves(o.path)
		if err := x.FS.RemoveAll(o.path); err != nil {
			return x.fault("remove", o.path, err)
		}
		x.recordRemoval(o.path, swept)
		x.discarded(gone...)
		return nil
	}
	return x.fault("remove", o.path, err)
}

// sweeps reports whether removal o takes away a temporary the
// interrupted restore this run completes left (inTemp, and not a user's
// path named alike: foreign), which Result counts in Swept, not Deleted.
func (x *Applier) sweeps(o op) bool {
	return x.Resuming && inTemp(o.path) && !x.foreign(o.path)
}

// recordRemoval records the removal of rel: in Deleted, or counted in
// Swept for a temporary (sweeps).
func (x *Applier) recordRemoval(rel string, swept bool) {
	if !swept {
		x.record(&x.Result.Deleted, rel)
		return
	}
	x.mu.Lock()
	x.Result.Swept++
	x.dirs[path.Dir(rel)] = true
	x.mu.Unlock()
}

func (x *Applier) mkdir(o op) error {
	if x.isBlocked(o.path) || x.badName(o) {
		return nil
	}
	if ok, err := x.clear(o); !ok || err != nil {
		return err
	}
	name, root := o.path, false
	if at, ok := x.inSubtree(o.path); ok {
		name = at
	} else if !x.syncEach && o.fresh && !x.stands(o.path) {
		name, root = tempName(o.path, x.stem()), true
	}
	err := x.FS.Mkdir(name, 0o700)
	switch {
	case err == nil:
		x.mu.Lock()
		x.dirs[path.Dir(o.path)] = true
		x.made[o.path] = true
		x.mu.Unlock()
		if root {
			x.subtrees[o.path] = name
		}
		return nil
	case errors.Is(err, os.ErrExist) && name == o.path:
		return nil
	}
	return x.fault("mkdir", o.path, err)
}

func (x *Applier) write(o op) error {
	if x.isBlocked(path.Dir(o.path)) || x.isBlocked(o.path) || x.badName(o) {
		return nil
	}
	if kind := x.guarded(o); kind != "" {
		x.conflict(o.path, kind)
		return nil
	}
	if ok, err := x.clear(o); !ok || err != nil {
		return err
	}
	o.discards = x.forcedOver(o)
	if o.kind == opChmod {
		return x.chmod(o)
	}
	at, inside := x.inSubtree(o.path)
	if !inside {
		at = tempName(o.path, x.stem())
	}
	var err error
	if o.kind == opLink {
		err = x.link(o, at)
	} else if err = x.writeFile(o, at); err != nil && x.freedSpace(err) {
		err = x.writeFile(o, at)
	}
	if err != nil {
		return x.fault("restore", o.path, err)
	}
	if inside { // in place once its subtree is
		x.mu.Lock()
		x.inside = append(x.inside, o.path)
		x.mu.Unlock()
		return nil
	}
	tmp := at
	if !x.syncEach {
		x.mu.Lock()
		x.staged = append(x.staged, staged{o, tmp})
		x.mu.Unlock()
		return nil
	}
	return x.place(o, tmp)
}

// chmod changes the mode of the file at o.path, and with syncEach makes
// the change durable at once: a mode is the file's own metadata, which the
// sync of its directory need not write. A failed sync stops the restore,
// as a directory's does (the mode is changed already: the restore's
// completion has nothing left to do there); a file gone meanwhile has
// nothing to sync.
func (x *Applier) chmod(o op) error {
	if err := x.FS.Chmod(o.path, fileMode(o.ent.Mode)); err != nil {
		return x.fault("restore", o.path, err)
	}
	if x.syncEach {
		if err := x.FS.SyncFile(o.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("sync %s: %w", o.path, err)
		}
	}
	x.record(&x.Result.Written, o.path)
	return nil
}

// stem starts the names of the applier's temporaries.
func (x *Applier) stem() string {
	if x.Export {
		return exportStem
	}
	return tempStem
}

// ScannedStat is what a scan saw of a file (Applier.Scanned). Inode is
// 0 where the platform's lookups do not give one.
type ScannedStat struct {
	Size, MtimeNs int64
	Inode         uint64
}

// lookBefore looks up what stands at each path the writes of p replace,
// before Apply changes anything (seen): a file another program changes
// while the restore runs (an editor saving) is then left alone by place,
// not replaced with content it never saw. A path the plan removes first
// (the target puts another kind of entry there) must then stand empty. A
// file to replace or remove that changed since the scan of the current
// state read it (Scanned) is left alone at once.
func (x *Applier) lookBefore(p *Plan) {
	x.seen = map[string]fs.FileInfo{}
	removed := make(map[string]bool, len(p.removes))
	for _, o := range p.removes {
		removed[o.path] = true
		if o.kind == opRemove && !o.swept && x.changedSinceScan(o.path, nil) {
			x.conflict(o.path, ConflictChanged)
		}
	}
	for _, o := range p.writes {
		if o.fresh || o.kind == opChmod {
			continue
		}
		if removed[o.path] {
			x.seen[o.path] = nil
			continue
		}
		switch fi, err := x.FS.Lstat(o.path); {
		case err == nil && x.changedSinceScan(o.path, fi):
			x.conflict(o.path, ConflictChanged)
		case err == nil:
			x.seen[o.path] = fi
		case errors.Is(err, fs.ErrNotExist):
			x.seen[o.path] = nil
		}
	}
}

// changedSinceScan reports whether the file at rel (fi, nil: looked up
// here) differs from what Scanned says the scan saw of it.
func (x *Applier) changedSinceScan(rel string, fi fs.FileInfo) bool {
	if x.Scanned == nil {
		return false
	}
	was, ok := x.Scanned(rel)
	if !ok {
		return false
	}
	if fi == nil {
		var err error
		if fi, err = x.FS.Lstat(rel); err != nil {
			return false // gone: nothing to keep
		}
	}
	ino, known := inodeNumber(fi)
	return fi.Size() != was.Size || fi.ModTime().UnixNano() != was.MtimeNs || known && was.Inode != 0 && ino != was.Inode
}

// unchangedSince reports whether what stands at rel is what lookBefore
// saw there: the same file (on unix, the same inode), with the same type,
// size and modification time, or still nothing. Permissions are not
// compared: they are the file's, shared by its hard links, which the
// restore's own chmod of another name may change, and a change of them
// loses no content. A path it did not look up is unchanged.
func (x *Applier) unchangedSince(rel string) bool {
	before, ok := x.seen[rel]
	if !ok {
		return true
	}
	now, err := x.FS.Lstat(rel)
	if before == nil || err != nil {
		return before == nil && errors.Is(err, fs.ErrNotExist)
	}
	return now.Mode().Type() == before.Mode().Type() && now.Size() == before.Size() && now.ModTime().Equal(before.ModTime()) && sameInode(now, before)
}

// place renames o's temporary file tmp onto its path and records it as
// written; a failed rename removes tmp, as does a path changed since the
// restore began writing (a conflict: its new content stays).
func (x *Applier) place(o op, tmp string) error {
	if !o.fresh { // a fresh path holds nothing captured to replace
		x.hold(o.path)
	}
	// The look last, right before the rename: what is left between them
	// is a write landing in that instant, or one through a descriptor the
	// writer opened before, into the file the rename replaces.
	if !x.unchangedSince(o.path) {
		_ = x.FS.Remove(tmp)
		x.conflict(o.path, ConflictChanged)
		return nil
	}
	if err := x.rename(tmp, o.path); err != nil {
		_ = x.FS.Remove(tmp)
		if o.kind == opLink && errors.Is(err, os.ErrNotExist) {
			// The link "made" is not there: Wine's CreateSymbolicLinkW
			// reports success and creates nothing.
			err = &SymlinkUnsupportedError{Err: err}
		}
		return x.fault("restore", o.path, err)
	}
	x.record(&x.Result.Written, o.path)
	if o.discards {
		x.discarded(o.path)
	}
	return nil
}

// placeStaged makes the staged files durable with one syncfs, then
// renames them into place, in parallel. An error that stops the restore,
// or a cancellation, ends the renames: the files not yet renamed are
// removed.
func (x *Applier) placeStaged(ctx context.Context) error {
	if len(x.staged) == 0 && len(x.subtrees) == 0 {
		return nil
	}
	if err := x.FS.SyncAll(); err != nil {
		return fmt.Errorf("sync workspace: %w", err)
	}
	if err := x.placeSubtrees(); err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(x.writers())
	for _, s := range x.staged {
		g.Go(func() error {
			if gctx.Err() != nil {
				_ = x.FS.Remove(s.tmp)
				return nil
			}
			return x.place(s.o, s.tmp)
		})
	}
	x.staged = nil
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// hold keeps the file at name, about to be replaced or removed, open
// until Apply ends (FS.Hold): its release then costs the restore nothing.
// Once the disk was found full (freedSpace), it holds nothing more.
func (x *Applier) hold(name string) {
	x.mu.Lock()
	full := len(x.held) >= maxHeld || x.spaceFreed
	x.mu.Unlock()
	if full {
		return
	}
	if c := x.FS.Hold(name); c != nil {
		x.mu.Lock()
		freed := x.spaceFreed // since the check above
		if !freed {
			x.held = append(x.held, c)
		}
		x.mu.Unlock()
		if freed {
			c.Close()
		}
	}
}

// freedSpace reports whether a write that failed with err is worth one
// more try: the disk (or the user's quota) was full, and the files the
// restore removed or replaced, which it held open (hold), are let go now
// to give their space back, or were let go since. A restore that fits
// once the files it removes are gone then succeeds.
func (x *Applier) freedSpace(err error) bool {
	if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EDQUOT) {
		return false
	}
	x.mu.Lock()
	held, before := x.held, x.spaceFreed
	x.held, x.spaceFreed = nil, true
	x.mu.Unlock()
	for _, c := range held {
		c.Close()
	}
	return before || len(held) > 0
}

// letGo closes the files the restore held, on a goroutine of its own: the
// kernel frees each as its descriptor closes, after Apply has returned.
func (x *Applier) letGo() {
	x.mu.Lock()
	held := x.held
	x.held = nil
	x.mu.Unlock()
	if len(held) == 0 {
		return
	}
	go func() {
		for _, c := range held {
			c.Close()
		}
	}()
}

// placeSubtrees renames each fresh subtree into place, and records the
// files written inside those placed. A subtree it may not place
// (permission denied) is a conflict, removed with all it holds.
func (x *Applier) placeSubtrees() error {
	roots := slices.Sorted(maps.Keys(x.subtrees))
	for _, root := range roots {
		tmp := x.subtrees[root]
		if err := x.rename(tmp, root); err != nil {
			if err := x.fault("restore", root, err); err != nil {
				return err
			}
			_ = x.FS.RemoveAll(tmp)
		}
		delete(x.subtrees, root)
	}
	x.mu.Lock()
	inside := x.inside
	x.inside = nil
	x.mu.Unlock()
	for _, rel := range inside {
		if !x.isBlocked(rel) {
			x.record(&x.Result.Written, rel)
		}
	}
	return nil
}

// dropStaged removes the temporary files and subtrees of a restore that
// stops before renaming them into place (what a resumed restore would
// remove anyway).
func (x *Applier) dropStaged() {
	for _, s := range x.staged {
		_ = x.FS.Remove(s.tmp)
	}
	x.staged = nil
	for root, tmp := range x.subtrees {
		_ = x.FS.RemoveAll(tmp)
		delete(x.subtrees, root)
	}
}

// writeFile writes a file's content and mode at at, synced when
// syncEach: a temporary sibling, renamed into place (place), or, inside
// a fresh subtree, its own name under the subtree's temporary one, so
// that a reader never sees a half-written file.
func (x *Applier) writeFile(o op, at string) (err error) {
	rc, _, err := x.Blobs.Open(o.ent.ID)
	if err != nil {
		return err
	}
	defer rc.Close()
	f, err := x.FS.Create(at)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = x.FS.Remove(f.Name())
		}
	}()
	_, err = objects.Copy(f, rc)
	if err == nil {
		err = f.Chmod(fileMode(o.ent.Mode))
	}
	if err == nil && x.syncEach {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// link creates a symlink at at (as writeFile places a file).
func (x *Applier) link(o op, at string) error {
	target, err := x.Blobs.Get(o.ent.ID)
	if err != nil {
		return err
	}
	if err := x.FS.Symlink(string(target), at); err != nil {
		if osfs.IsSymlinkUnsupported(err) {
			return &SymlinkUnsupportedError{Err: err}
		}
		return err
	}
	return nil
}

func (x *Applier) sortResult() {
	sort.Strings(x.Result.Written)
	sort.Strings(x.Result.Deleted)
	sort.Strings(x.Result.Discarded)
	sort.Slice(x.Result.Conflicts, func(i, j int) bool { return x.Result.Conflicts[i].Path < x.Result.Conflicts[j].Path })
}
