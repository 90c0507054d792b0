package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"
)

// applier carries out a restore plan inside the workspace root.
type applier struct {
	e     *Engine
	root  *os.Root
	force bool
	res   *RestoreResult
	// syncEach makes every written file durable (fdatasync) before its
	// rename; large restores instead end with one syncfs.
	syncEach bool

	mu      sync.Mutex // guards res.Written, res.Deleted, res.Conflicts, blocked
	blocked []string   // paths (and their subtrees) left alone because of a conflict
}

// uncapturedReason explains a conflict to the user.
const uncapturedReason = "a file not captured by any checkpoint (ignored, skipped or unsaved) stands here; use --force to overwrite it"

// fileMode converts stored permission bits to an os.FileMode.
func fileMode(perm uint32) os.FileMode {
	m := os.FileMode(perm & 0o777)
	if perm&0o4000 != 0 {
		m |= os.ModeSetuid
	}
	if perm&0o2000 != 0 {
		m |= os.ModeSetgid
	}
	if perm&0o1000 != 0 {
		m |= os.ModeSticky
	}
	return m
}

func (x *applier) isBlocked(rel string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, b := range x.blocked {
		if rel == b || strings.HasPrefix(rel, b+"/") {
			return true
		}
	}
	return false
}

func (x *applier) conflict(rel, reason string) {
	x.mu.Lock()
	x.res.Conflicts = append(x.res.Conflicts, Conflict{Path: rel, Reason: reason})
	x.blocked = append(x.blocked, rel)
	x.mu.Unlock()
}

func (x *applier) record(list *[]string, rel string) {
	x.mu.Lock()
	*list = append(*list, rel)
	x.mu.Unlock()
}

// obstructed reports whether an uncaptured item stands where a fresh
// creation goes. An existing directory does not obstruct a directory: the
// restore merges into it.
func (x *applier) obstructed(o op) bool {
	if !o.fresh {
		return false
	}
	fi, err := x.root.Lstat(o.path)
	if err != nil {
		return false
	}
	return !(o.kind == opMkdir && fi.IsDir())
}

// clear handles an obstructed creation: with force the obstacle is removed,
// otherwise the path becomes a conflict. It reports whether to go on.
func (x *applier) clear(o op) (bool, error) {
	if !x.obstructed(o) {
		return true, nil
	}
	if !x.force {
		x.conflict(o.path, uncapturedReason)
		return false, nil
	}
	if err := x.root.RemoveAll(o.path); err != nil {
		return false, fmt.Errorf("remove %s: %w", o.path, err)
	}
	return true, nil
}

// preview fills the result with what apply would do, touching nothing.
func (x *applier) preview(p *restorePlan) {
	for _, o := range p.removes {
		x.res.Deleted = append(x.res.Deleted, o.path)
	}
	for _, list := range [][]op{p.mkdirs, p.writes} {
		for _, o := range list {
			switch {
			case x.isBlocked(o.path):
			case x.obstructed(o) && !x.force:
				x.conflict(o.path, uncapturedReason)
			case o.kind != opMkdir:
				x.res.Written = append(x.res.Written, o.path)
			}
		}
	}
	x.sortResult()
}

// syncEachLimit is the largest restore whose files are synced one by one.
// syncfs flushes every dirty page of the whole filesystem, whoever wrote
// it (seconds, after a big build), so small restores, the common case,
// sync only what they wrote; beyond this many files one syncfs is cheaper.
const syncEachLimit = 512

// apply carries out the plan: removals, directories, contents in parallel,
// directory modes. The restored files are durable before it returns (and so
// before the journal is removed): each synced before its rename, or, for
// large restores, all at once with syncfs.
func (x *applier) apply(ctx context.Context, p *restorePlan) error {
	x.syncEach = len(p.writes) <= syncEachLimit
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
	g.SetLimit(2 * runtime.GOMAXPROCS(0))
	for _, o := range p.writes {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return x.write(o) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, o := range p.dirModes {
		if x.isBlocked(o.path) {
			continue
		}
		if err := x.root.Chmod(o.path, fileMode(o.ent.Mode)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("chmod %s: %w", o.path, err)
		}
	}
	x.sortResult()
	if x.syncEach {
		return nil
	}
	return syncWorkspace(x.e.workspace)
}

func (x *applier) remove(o op) error {
	err := x.root.Remove(o.path)
	switch {
	case err == nil:
		x.record(&x.res.Deleted, o.path)
		return nil
	case errors.Is(err, os.ErrNotExist):
		return nil // already gone: a resumed restore
	case o.kind == opRemoveDir && errors.Is(err, unix.ENOTEMPTY):
		// The directory still holds uncaptured files. Leave it, unless the
		// target needs the path for something else.
		if !o.replaced {
			return nil
		}
		if !x.force {
			x.conflict(o.path, "the directory holds files not captured by any checkpoint; use --force to remove them")
			return nil
		}
		if err := x.root.RemoveAll(o.path); err != nil {
			return fmt.Errorf("remove %s: %w", o.path, err)
		}
		x.record(&x.res.Deleted, o.path)
		return nil
	}
	return fmt.Errorf("remove %s: %w", o.path, err)
}

func (x *applier) mkdir(o op) error {
	if x.isBlocked(o.path) {
		return nil
	}
	if ok, err := x.clear(o); !ok || err != nil {
		return err
	}
	err := x.root.Mkdir(o.path, 0o700)
	if err == nil || errors.Is(err, os.ErrExist) {
		return nil
	}
	return fmt.Errorf("mkdir %s: %w", o.path, err)
}

// injectWriteFault, when set by a test, runs before each write of a restore;
// an error it returns aborts the restore there, as a crash or a full disk would.
var injectWriteFault func(rel string) error

func (x *applier) write(o op) error {
	if x.isBlocked(path.Dir(o.path)) || x.isBlocked(o.path) {
		return nil
	}
	if injectWriteFault != nil {
		if err := injectWriteFault(o.path); err != nil {
			return err
		}
	}
	if ok, err := x.clear(o); !ok || err != nil {
		return err
	}
	var err error
	switch o.kind {
	case opChmod:
		err = x.root.Chmod(o.path, fileMode(o.ent.Mode))
	case opLink:
		err = x.link(o)
	default:
		err = x.writeFile(o)
	}
	if err != nil {
		return fmt.Errorf("restore %s: %w", o.path, storeError(err, x.e.storeDir))
	}
	x.record(&x.res.Written, o.path)
	return nil
}

// tempSeq makes temporary names unique within this process.
var tempSeq atomic.Uint64

// tempName is a hidden sibling of rel for an atomic replace.
func tempName(rel string) string {
	return path.Join(path.Dir(rel), fmt.Sprintf(".ckpt-tmp-%d-%d", os.Getpid(), tempSeq.Add(1)))
}

// copyBufs pools the buffers used to stream blobs into files.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// writeFile writes a file's content and mode to a temporary sibling and
// renames it into place, so a reader never sees a half-written file.
func (x *applier) writeFile(o op) (err error) {
	rc, _, err := x.e.blobs.Open(o.ent.ID)
	if err != nil {
		return err
	}
	defer rc.Close()
	tmp := tempName(o.path)
	f, err := x.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = x.root.Remove(tmp)
		}
	}()
	buf := copyBufs.Get().(*[]byte)
	_, err = io.CopyBuffer(f, rc, *buf)
	copyBufs.Put(buf)
	if err == nil {
		err = f.Chmod(fileMode(o.ent.Mode))
	}
	if err == nil && x.syncEach {
		err = unix.Fdatasync(int(f.Fd()))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return x.root.Rename(tmp, o.path)
}

// link creates a symlink under a temporary name and renames it into place.
func (x *applier) link(o op) error {
	target, err := x.e.blobs.Get(o.ent.ID)
	if err != nil {
		return err
	}
	tmp := tempName(o.path)
	if err := x.root.Symlink(string(target), tmp); err != nil {
		return err
	}
	if err := x.root.Rename(tmp, o.path); err != nil {
		_ = x.root.Remove(tmp)
		return err
	}
	return nil
}

func (x *applier) sortResult() {
	sort.Strings(x.res.Written)
	sort.Strings(x.res.Deleted)
	sort.Slice(x.res.Conflicts, func(i, j int) bool { return x.res.Conflicts[i].Path < x.res.Conflicts[j].Path })
}

// syncWorkspace flushes the workspace's filesystem (one syncfs instead of an
// fsync per restored file, for large restores).
func syncWorkspace(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("sync workspace: %w", err)
	}
	return nil
}
