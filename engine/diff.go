package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/ckpt/ckpt/diffview"
	"github.com/ckpt/ckpt/engine/internal/save"
	"github.com/ckpt/ckpt/objects"
	"golang.org/x/sync/errgroup"
)

// FileDiff describes one change with its contents: the text of each side
// (nil for a side that does not exist, or for binary or too large content).
type FileDiff struct {
	Path       string       `json:"path"`
	Absolute   string       `json:"absolute"` // the path in the workspace
	Status     ChangeStatus `json:"status"`
	OldPath    string       `json:"old_path,omitempty"`
	Binary     bool         `json:"binary"`
	Before     *string      `json:"before"`
	After      *string      `json:"after"`
	BeforeSize int64        `json:"before_size"`
	AfterSize  int64        `json:"after_size"`
	TooLarge   bool         `json:"too_large,omitempty"` // a side exceeds DiffFormat's limits; no contents loaded
}

// DiffFormat configures patches, stats and FileDiff contents.
type DiffFormat struct {
	// Context is the number of context lines around each hunk (0 = 3).
	Context int
	// Color adds ANSI colours; the caller decides (terminal, NO_COLOR).
	Color bool
	// MaxBytes is the largest side, in bytes, that is diffed line by
	// line; larger files are "too large" (0 = 1 MiB, negative = no limit).
	MaxBytes int64
	// MaxLines is the largest line count of a side that is diffed line
	// by line (0 = 20,000, negative = no limit).
	MaxLines int
	// StatWidth is the total width of WriteStat lines (0 = 80).
	StatWidth int
}

func (f DiffFormat) internal() diffview.Options { return diffview.Options(f) }

// DiffOptions configure Diff.
type DiffOptions struct {
	Task string
	// Paths keep only changes at or under these workspace-relative paths;
	// one that is on neither side, or an empty path, is ErrBadRequest.
	Paths []string
	// Mode, when set, picks the comparison from the task's history instead
	// of the from and to refs: from is then the mode's REF (ignored by
	// ModeFull) and to must be empty.
	Mode DiffMode
	// Capture, when set, is what a diff against the workspace reads of it
	// instead of the Engine's Options (see Capture).
	Capture *Capture
}

// DiffResult is a change set. Contents are loaded only when asked for, so a
// host can list thousands of changes without reading their bytes.
type DiffResult struct {
	From, To    ID // checkpoint ids; To is zero when ToWorkspace
	ToWorkspace bool
	Changes     []Change

	raw      []diffview.Change // Changes in diffview's terms
	places   places
	storeDir string // for the reports of damage the loaders meet
	before   diffview.BlobLoader
	after    diffview.BlobLoader
}

// Diff compares checkpoint from with checkpoint to, or with the live
// workspace when to is WorkspaceRef or empty. from is a ref (see Resolve):
// pass "HEAD" for the task's head. With opts.Mode set, the comparison is
// the mode's (see DiffMode) and from is its REF.
// Comparing checkpoints reads only the trees on the changed paths; comparing
// with the workspace reads only files whose stat changed since the last save
// and writes nothing to the store.
func (e *Engine) Diff(ctx context.Context, from, to string, opts DiffOptions) (*DiffResult, error) {
	if err := opts.Capture.check(); err != nil {
		return nil, translate(err, e.storeDir)
	}
	res, err := e.diff(ctx, from, to, opts)
	return res, translate(err, e.storeDir)
}

func (e *Engine) diff(ctx context.Context, from, to string, opts DiffOptions) (*DiffResult, error) {
	task, err := taskName(opts.Task)
	if err != nil {
		return nil, err
	}
	filter, err := parsePathFilter(opts.Paths)
	if err != nil {
		return nil, err
	}
	if opts.Mode != "" {
		if to != "" {
			return nil, fmt.Errorf("%w: diff mode %s takes one ref, not two", ErrBadRequest, opts.Mode)
		}
		if from, to, err = e.diffRange(ctx, task, opts.Mode, from); err != nil {
			return nil, err
		}
	}
	fromID, fromCP, err := e.resolveCheckpoint(task, from)
	if err != nil {
		return nil, err
	}
	store := e.storeLoader(ctx)
	res := &DiffResult{From: ID(fromID), places: e.places, storeDir: e.storeDir, before: store, after: store}
	var snap *save.Snapshot
	var toRoot objects.ID
	if to == "" || to == WorkspaceRef {
		if snap, err = e.scan(ctx, opts.Capture, fromCP.Root); err != nil {
			return nil, err
		}
		toRoot, res.ToWorkspace, res.after = snap.Root, true, workspaceLoader{e.places}
	} else {
		toID, toCP, err := e.resolveCheckpoint(task, to)
		if err != nil {
			return nil, err
		}
		res.To, toRoot = ID(toID), toCP.Root
	}
	if err := requireMatches(e.save.TreeSource(snap), filter, "either side of the diff", fromCP.Root, toRoot); err != nil {
		return nil, err
	}
	res.raw, err = diffview.Compare(ctx, e.save.TreeSource(snap), fromCP.Root, toRoot, filter)
	if err != nil {
		return nil, err
	}
	res.Changes = make([]Change, len(res.raw))
	for i, c := range res.raw {
		res.Changes[i] = publicChange(c)
	}
	if !e.opts.ReadOnly {
		// Blobs a pull left on a remote come in one coalesced fetch, not
		// one request each as the changes are read.
		if _, err := e.fetchBlobs(ctx, changedBlobs(res.raw), nil); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Content returns the bytes of one side of a change (after=false: before).
// A side that does not exist has no content (nil, nil). A side a pull left
// on a remote is fetched with the values of Diff's context (see
// Options.OpenRemote), also after that context is done.
func (r *DiffResult) Content(c Change, after bool) ([]byte, error) {
	side, loader, p := c.Before, r.before, c.OldPath
	if after {
		side, loader, p = c.After, r.after, c.Path
	}
	if p == "" {
		p = c.Path
	}
	if side == nil {
		return nil, nil
	}
	b, err := loader.LoadBlob(p, objects.ID(side.ID))
	return b, translate(err, r.storeDir)
}

// WritePatch writes a unified patch that git apply and patch -p1 accept.
func (r *DiffResult) WritePatch(w io.Writer, f DiffFormat) error {
	return translate(diffview.WritePatch(w, r.raw, r.before, r.after, f.internal()), r.storeDir)
}

// WriteStat writes a git-style --stat summary.
func (r *DiffResult) WriteStat(w io.Writer, f DiffFormat) error {
	return translate(diffview.WriteStat(w, r.raw, r.before, r.after, f.internal()), r.storeDir)
}

// WriteNameStatus writes one "STATUS\tpath" line per change.
func (r *DiffResult) WriteNameStatus(w io.Writer) error {
	return translate(diffview.WriteNameStatus(w, r.raw), r.storeDir)
}

// Files describes every change with its contents (text only) and absolute path.
func (r *DiffResult) Files(f DiffFormat) ([]FileDiff, error) {
	out := make([]FileDiff, len(r.raw))
	err := r.EachFile(f, func(i int, fd FileDiff) error {
		out[i] = fd
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EachFile describes every change as Files does and hands the i-th (in
// the order of Changes) to fn, on every core: fn runs in the goroutine
// that loaded the change's sides, as soon as it has, so it must be safe for
// concurrent use, and what it does with one change (encode it, say) runs
// beside the loading of the others. The first error, fn's or a load's, is
// returned.
func (r *DiffResult) EachFile(f DiffFormat, fn func(i int, fd FileDiff) error) error {
	// Loading a side mostly decompresses and hashes (a small file's group
	// record): the changes are described on every core.
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, c := range r.raw {
		g.Go(func() error {
			d, err := diffview.Describe(c, r.before, r.after, f.internal())
			if err != nil {
				return translate(err, r.storeDir)
			}
			fd := FileDiff{Path: c.Path, Absolute: r.places.abs(c.Path),
				Status: ChangeStatus(c.Status), OldPath: c.OldPath, Binary: d.Binary, TooLarge: d.TooLarge,
				Before: d.Before, After: d.After}
			if c.Before != nil {
				fd.BeforeSize = c.Before.Size
			}
			if c.After != nil {
				fd.AfterSize = c.After.Size
			}
			return fn(i, fd)
		})
	}
	return g.Wait()
}

// storeLoader reads blobs from the store, through one read session for
// the diff (the changed files of one save share a few group records), and
// from a remote those a pull left there, opened with the values of the
// diff's context (a server's client's environment: its credentials and
// passphrase) but not its end: a DiffResult's contents are read after
// Diff returns.
type storeLoader struct {
	e     *Engine
	reads *objects.ReadSession
	ctx   context.Context
}

// storeLoader starts the reads of one call with context ctx.
func (e *Engine) storeLoader(ctx context.Context) storeLoader {
	return storeLoader{e, e.blobs.ReadSession(), context.WithoutCancel(ctx)}
}

func (s storeLoader) LoadBlob(_ string, id objects.ID) ([]byte, error) {
	if b, err := s.reads.Get(id); !errors.Is(err, objects.ErrNotFound) {
		return b, err
	}
	return s.e.getBlob(s.ctx, id)
}

// LoadBlobPrefix reads only the first n bytes, for the binary test of large blobs.
func (s storeLoader) LoadBlobPrefix(_ string, id objects.ID, n int) ([]byte, error) {
	rc, _, err := s.e.openBlob(s.ctx, id)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return readPrefix(rc, n)
}

// workspaceLoader reads the live file (or symlink target) at a path, through
// an os.Root so a path can never lead outside the workspace.
type workspaceLoader struct{ places places }

func (w workspaceLoader) LoadBlob(rel string, _ objects.ID) ([]byte, error) {
	return w.load(rel, -1)
}

func (w workspaceLoader) LoadBlobPrefix(rel string, _ objects.ID, n int) ([]byte, error) {
	return w.load(rel, n)
}

// load reads the whole content (n < 0) or its first n bytes.
func (w workspaceLoader) load(rel string, n int) ([]byte, error) {
	dir, in, ok := w.places.locate(rel)
	if !ok {
		return nil, fmt.Errorf("%s: %w", rel, os.ErrNotExist)
	}
	rel = in
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fi, err := root.Lstat(rel)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		t, err := root.Readlink(rel)
		return []byte(t), err
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if n < 0 {
		return io.ReadAll(f)
	}
	return readPrefix(f, n)
}

func readPrefix(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, n)
	k, err := io.ReadFull(r, buf)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return buf[:k], err
}

// QuotePath returns path as diff output writes it (git's core.quotePath):
// unchanged when it holds only printable ASCII other than `"` and `\`,
// otherwise C-quoted in double quotes, so that a name holding a newline or
// a tab stays on one line of a listing.
func QuotePath(path string) string { return diffview.QuotePath(path) }

// DiffMode names one of the four standard comparisons of a task's history.
type DiffMode string

// Diff modes.
const (
	ModeCheckpoint DiffMode = "checkpoint" // REF → the next checkpoint (or the workspace after the last)
	ModeFromInit   DiffMode = "from-init"  // the first checkpoint → REF
	ModeToCurrent  DiffMode = "to-current" // REF → the workspace
	ModeFull       DiffMode = "full"       // the first checkpoint → the workspace
)

// diffRange resolves a diff mode against a task's checkpoints into the
// (from, to) refs for Diff. ref is ignored by ModeFull.
func (e *Engine) diffRange(ctx context.Context, task string, mode DiffMode, ref string) (from, to string, err error) {
	switch {
	case mode != ModeCheckpoint && mode != ModeFromInit && mode != ModeToCurrent && mode != ModeFull:
		return "", "", fmt.Errorf("%w: diff mode must be checkpoint, from-init, to-current or full, not %q", ErrBadRequest, mode)
	case ref == "" && mode != ModeFull:
		return "", "", fmt.Errorf("%w: diff mode %s takes a ref", ErrBadRequest, mode)
	}
	log, err := e.list(ctx, task)
	if err != nil {
		return "", "", err
	}
	if len(log.Checkpoints) == 0 {
		return "", "", fmt.Errorf("%w: task %q has no checkpoints yet", ErrUnknownRef, log.Task)
	}
	first := log.Checkpoints[0].ID.String()
	if mode == ModeFull {
		return first, WorkspaceRef, nil
	}
	oid, err := e.resolve(task, ref)
	if err != nil {
		return "", "", err
	}
	id := ID(oid)
	switch mode {
	case ModeFromInit:
		return first, id.String(), nil
	case ModeToCurrent:
		return id.String(), WorkspaceRef, nil
	}
	return id.String(), nextAfter(log, id), nil // ModeCheckpoint
}

// nextAfter is the checkpoint that follows id in the task's sequence, or the workspace.
func nextAfter(log *Log, id ID) string {
	for i, c := range log.Checkpoints {
		if c.ID == id && i+1 < len(log.Checkpoints) {
			return log.Checkpoints[i+1].ID.String()
		}
	}
	return WorkspaceRef
}
