package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/ckpt/ckpt/diffview"
	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/internal/osfs"
	"github.com/ckpt/ckpt/objects"
)

// ExportOptions configure Export.
type ExportOptions struct {
	Task string // the task REF is resolved in ("" is DefaultTask)
	// Paths, when given, limit the export to these workspace-relative
	// files and directories (with their parents); one that is not in the
	// checkpoint, or an empty path, is ErrBadRequest.
	Paths []string
}

// ExportResult is what an export wrote.
type ExportResult struct {
	Checkpoint ID
	Dir        string
	Written    []string // files and symlinks written, relative to Dir
	Conflicts  []Conflict
}

// Export writes the tree of checkpoint ref (or the paths of it given in
// opts) into dir, with modes and symlinks, the way a restore writes the
// workspace: each file atomically, everything durable before it returns.
// dir must not exist (it is created) or be an empty directory. Export
// never touches the workspace, the head or the journal, and takes no
// write lock: it runs beside saves.
func (e *Engine) Export(ctx context.Context, ref, dir string, opts ExportOptions) (*ExportResult, error) {
	res, err := e.export(ctx, ref, dir, opts)
	return res, translate(err, e.storeDir)
}

func (e *Engine) export(ctx context.Context, ref, dir string, opts ExportOptions) (*ExportResult, error) {
	task, err := taskName(opts.Task)
	if err != nil {
		return nil, err
	}
	filter, err := parsePathFilter(opts.Paths)
	if err != nil {
		return nil, err
	}
	id, cp, err := e.resolveCheckpoint(task, ref)
	if err != nil {
		return nil, err
	}
	if err := requireMatches(e.db, filter, "the checkpoint", cp.Root); err != nil {
		return nil, err
	}
	abs, err := prepareExportDir(dir)
	if err != nil {
		return nil, err
	}
	x := &exporter{e: e, dir: abs, filter: filter}
	applied, err := x.to(ctx, cp.Root)
	if err != nil {
		return nil, err
	}
	res := &ExportResult{Checkpoint: ID(id), Dir: abs, Written: applied.Written}
	for _, c := range applied.Conflicts {
		res.Conflicts = append(res.Conflicts, Conflict{Path: c.Path, Kind: ConflictKind(c.Kind), Reason: c.Reason})
	}
	return res, nil
}

// prepareExportDir makes dir, or checks that it is an empty directory,
// and returns its absolute path. The directories it makes get the user's
// umask, not the one a process that keeps its store private set
// (osfs.UserPerm: the ckpt CLI's 077), as the directories below them get
// the modes their checkpoint records.
func prepareExportDir(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("%w: export needs a directory", ErrBadRequest)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	switch names, err := readDirNames(abs); {
	case errors.Is(err, os.ErrNotExist):
		if err := osfs.MkdirAllUser(abs); err != nil {
			return "", fmt.Errorf("export: %w", err)
		}
	case err != nil:
		return "", fmt.Errorf("export: %w", err)
	case len(names) > 0:
		return "", fmt.Errorf("%w: export directory %s is not empty", ErrBadRequest, abs)
	}
	return abs, nil
}

// readDirNames lists up to one name of dir: enough to tell it is not empty.
func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return names, err
}

// exporter writes checkpoint trees into a directory outside the
// workspace through restore's planner and writer: the first tree whole,
// each later one as the difference from the one before (a bisect's
// scratch directory is rewritten by difference at each step).
type exporter struct {
	e      *Engine
	dir    string
	filter diffview.PathFilter
	root   objects.ID      // the tree the directory holds now (zero: empty)
	names  *osfs.NameRules // how the directory's file system matches names, probed on first use
}

// to rewrites the directory from its current tree to root.
func (x *exporter) to(ctx context.Context, root objects.ID) (restore.Result, error) {
	if x.names == nil {
		names, err := osfs.ProbeNames(x.dir)
		if err != nil {
			return restore.Result{}, fmt.Errorf("export: %s: %w", x.dir, err)
		}
		x.names = &names
	}
	plan, err := restore.NewPlan(ctx, x.e.save.TreeSource(nil), x.root, root, x.filter, *x.names, false)
	if err != nil {
		return restore.Result{}, err
	}
	if _, err := x.e.fetchBlobs(ctx, slices.Collect(maps.Keys(plan.Blobs())), nil); err != nil {
		return restore.Result{}, err
	}
	fsys, closeFS, err := restore.OpenRoot(x.dir, x.e.opts.hooks.wrapExportFS)
	if err != nil {
		return restore.Result{}, fmt.Errorf("export: %w", err)
	}
	defer closeFS()
	a := &restore.Applier{FS: fsys, Blobs: x.e.blobs.ReadSession(), Force: true, Export: true, NameProblem: osfs.NameProblem}
	if err := a.Apply(ctx, plan); err != nil {
		return a.Result, err
	}
	x.root = root
	return a.Result, nil
}
