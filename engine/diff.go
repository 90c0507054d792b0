package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ckpt/ckpt/internal/diffview"
	"github.com/ckpt/ckpt/internal/index"
	"github.com/ckpt/ckpt/internal/objects"
)

// Change is one changed path (see diffview.Change).
type Change = diffview.Change

// FileDiff is the JSON description of one change, contents included.
type FileDiff = diffview.FileJSON

// DiffFormat configures patch and stat output (see diffview.Options).
type DiffFormat = diffview.Options

// DiffOptions configure Diff.
type DiffOptions struct {
	Task  string
	Paths []string // keep only changes at or under these workspace-relative paths
}

// DiffResult is a change set. Contents are loaded only when asked for, so a
// host can list thousands of changes without reading their bytes.
type DiffResult struct {
	From, To    objects.ID // checkpoint ids; To is zero when ToWorkspace
	ToWorkspace bool
	Changes     []Change

	workspace string
	before    diffview.BlobLoader
	after     diffview.BlobLoader
}

// Diff compares checkpoint from with checkpoint to, or with the live
// workspace when to is WorkspaceRef or empty. from is a ref (see Resolve):
// pass "HEAD" for the task's head.
// Comparing checkpoints reads only the trees on the changed paths; comparing
// with the workspace reads only files whose stat changed since the last save
// and writes nothing to the store.
func (e *Engine) Diff(ctx context.Context, from, to string, opts DiffOptions) (*DiffResult, error) {
	task := taskOrDefault(opts.Task)
	filter, err := parsePathFilter(opts.Paths)
	if err != nil {
		return nil, err
	}
	fromID, fromCP, err := e.resolveCheckpoint(task, from)
	if err != nil {
		return nil, err
	}
	store := storeLoader{e}
	res := &DiffResult{From: fromID, workspace: e.workspace, before: store, after: store}
	var snap *snapshot
	var toRoot objects.ID
	if to == "" || to == WorkspaceRef {
		if snap, err = e.scan(ctx, nil); err != nil {
			return nil, err
		}
		toRoot, res.ToWorkspace, res.after = snap.root, true, workspaceLoader{e.workspace}
	} else {
		var toCP index.Checkpoint
		if res.To, toCP, err = e.resolveCheckpoint(task, to); err != nil {
			return nil, err
		}
		toRoot = toCP.Root
	}
	res.Changes, err = diffview.Compare(ctx, e.treeSource(snap), fromCP.Root, toRoot, filter)
	if err != nil {
		return nil, storeError(err, e.storeDir)
	}
	return res, nil
}

// Content returns the bytes of one side of a change (after=false: before).
// A side that does not exist has no content (nil, nil).
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
	return loader.LoadBlob(p, side.ID)
}

// WritePatch writes a unified patch that git apply and patch -p1 accept.
func (r *DiffResult) WritePatch(w io.Writer, f DiffFormat) error {
	return diffview.WritePatch(w, r.Changes, r.before, r.after, f)
}

// WriteStat writes a git-style --stat summary.
func (r *DiffResult) WriteStat(w io.Writer, f DiffFormat) error {
	return diffview.WriteStat(w, r.Changes, r.before, r.after, f)
}

// WriteNameStatus writes one "STATUS\tpath" line per change.
func (r *DiffResult) WriteNameStatus(w io.Writer) error {
	return diffview.WriteNameStatus(w, r.Changes)
}

// Files describes every change with its contents (text only) and absolute path.
func (r *DiffResult) Files(f DiffFormat) ([]FileDiff, error) {
	out := make([]FileDiff, 0, len(r.Changes))
	for _, c := range r.Changes {
		d, err := diffview.Describe(c, r.before, r.after, f)
		if err != nil {
			return nil, err
		}
		d.Absolute = filepath.Join(r.workspace, filepath.FromSlash(c.Path))
		out = append(out, d)
	}
	return out, nil
}

// storeLoader reads blobs from the store.
type storeLoader struct{ e *Engine }

func (s storeLoader) LoadBlob(_ string, id objects.ID) ([]byte, error) {
	b, err := s.e.blobs.Get(id)
	return b, storeError(err, s.e.storeDir)
}

// LoadBlobPrefix reads only the first n bytes, for the binary test of large blobs.
func (s storeLoader) LoadBlobPrefix(_ string, id objects.ID, n int) ([]byte, error) {
	rc, _, err := s.e.blobs.Open(id)
	if err != nil {
		return nil, storeError(err, s.e.storeDir)
	}
	defer rc.Close()
	return readPrefix(rc, n)
}

// workspaceLoader reads the live file (or symlink target) at a path, through
// an os.Root so a path can never lead outside the workspace.
type workspaceLoader struct{ dir string }

func (w workspaceLoader) LoadBlob(rel string, _ objects.ID) ([]byte, error) {
	return w.load(rel, -1)
}

func (w workspaceLoader) LoadBlobPrefix(rel string, _ objects.ID, n int) ([]byte, error) {
	return w.load(rel, n)
}

// load reads the whole content (n < 0) or its first n bytes.
func (w workspaceLoader) load(rel string, n int) ([]byte, error) {
	root, err := os.OpenRoot(w.dir)
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

// DiffRange resolves a diff mode against a task's checkpoints into the
// (from, to) refs for Diff. ref is ignored by ModeFull.
func (e *Engine) DiffRange(ctx context.Context, task string, mode DiffMode, ref string) (from, to string, err error) {
	log, err := e.List(ctx, task)
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
	id, err := e.Resolve(ctx, task, ref)
	if err != nil {
		return "", "", err
	}
	switch mode {
	case ModeFromInit:
		return first, id.String(), nil
	case ModeToCurrent:
		return id.String(), WorkspaceRef, nil
	case ModeCheckpoint:
		return id.String(), nextAfter(log, id), nil
	}
	return "", "", fmt.Errorf("%w: diff mode must be checkpoint, from-init, to-current or full, not %q", ErrBadRequest, mode)
}

// nextAfter is the checkpoint that follows id in the task's sequence, or the workspace.
func nextAfter(log *Log, id objects.ID) string {
	for i, c := range log.Checkpoints {
		if c.ID == id && i+1 < len(log.Checkpoints) {
			return log.Checkpoints[i+1].ID.String()
		}
	}
	return WorkspaceRef
}
