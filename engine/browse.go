package engine

import (
	"context"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/ckpt/ckpt/diffview"
	"github.com/ckpt/ckpt/objects"
)

// cleanRelPath validates a workspace-relative path given by a caller by
// the rule of diffview.CleanPath: it must not be absolute or climb out of
// the workspace. "" and "." mean the root.
func cleanRelPath(p string) (string, error) {
	c, err := diffview.CleanPath(p)
	switch {
	case err == nil:
		return c, nil
	case path.IsAbs(p):
		return "", fmt.Errorf("%w: path %q is absolute; give it relative to the workspace", ErrBadRequest, p)
	}
	return "", fmt.Errorf("%w: path %q leaves the workspace", ErrBadRequest, p)
}

// lookup finds the entry at rel in the tree rooted at root. The root itself
// is returned as a directory entry.
func (e *Engine) lookup(root objects.ID, rel string) (objects.Entry, error) {
	return findEntry(e.db, root, rel)
}

// findEntry finds the entry at rel in the tree rooted at root, reading the
// trees on its way from src; ErrBadRequest when rel is not in the tree.
func findEntry(src diffview.TreeSource, root objects.ID, rel string) (objects.Entry, error) {
	ent := objects.Entry{Kind: objects.KindDir, ID: root}
	if rel == "" {
		return ent, nil
	}
	for _, name := range strings.Split(rel, "/") {
		if ent.Kind != objects.KindDir {
			return ent, fmt.Errorf("%w: %q is not in the checkpoint (%s is not a directory)", ErrBadRequest, rel, ent.Name)
		}
		if ent.ID.IsZero() {
			return ent, fmt.Errorf("%w: %q is not in the checkpoint", ErrBadRequest, rel)
		}
		t, err := src.Tree(ent.ID)
		if err != nil {
			return ent, err
		}
		found := false
		for _, c := range t.Entries {
			if c.Name == name {
				ent, found = c, true
				break
			}
		}
		if !found {
			return ent, fmt.Errorf("%w: %q is not in the checkpoint", ErrBadRequest, rel)
		}
	}
	return ent, nil
}

// Ls lists the entries of the directory at dir in checkpoint ref (or the
// single entry, when dir names a file or symlink).
func (e *Engine) Ls(ctx context.Context, task, ref, dir string) ([]LsEntry, error) {
	out, err := e.ls(ctx, task, ref, dir)
	return out, translate(err, e.storeDir)
}

func (e *Engine) ls(ctx context.Context, task, ref, dir string) ([]LsEntry, error) {
	rel, root, err := e.refPath(ctx, task, ref, dir)
	if err != nil {
		return nil, err
	}
	ent, err := e.lookup(root, rel)
	if err != nil {
		return nil, err
	}
	if ent.Kind != objects.KindDir {
		return []LsEntry{lsEntry(rel, ent)}, nil
	}
	t, err := e.db.Tree(ent.ID)
	if err != nil {
		return nil, err
	}
	out := make([]LsEntry, len(t.Entries))
	for i, c := range t.Entries {
		out[i] = lsEntry(path.Join(rel, c.Name), c)
	}
	return out, nil
}

// Cat opens the content of the file at file in checkpoint ref (for a
// symlink, its target text). The reader verifies the content's hash.
func (e *Engine) Cat(ctx context.Context, task, ref, file string) (io.ReadCloser, int64, error) {
	rc, n, err := e.cat(ctx, task, ref, file)
	return rc, n, translate(err, e.storeDir)
}

func (e *Engine) cat(ctx context.Context, task, ref, file string) (io.ReadCloser, int64, error) {
	rel, root, err := e.refPath(ctx, task, ref, file)
	if err != nil {
		return nil, 0, err
	}
	ent, err := e.lookup(root, rel)
	if err != nil {
		return nil, 0, err
	}
	if ent.Kind == objects.KindDir {
		return nil, 0, fmt.Errorf("%w: %q is a directory; use ls", ErrBadRequest, file)
	}
	return e.openBlob(ctx, ent.ID)
}

func (e *Engine) refPath(ctx context.Context, task, ref, p string) (string, objects.ID, error) {
	rel, err := cleanRelPath(p)
	if err != nil {
		return "", objects.ID{}, err
	}
	if err := ctx.Err(); err != nil {
		return "", objects.ID{}, err
	}
	_, cp, err := e.resolveCheckpoint(task, ref)
	return rel, cp.Root, err
}

// ReadState returns the state blob attached to a checkpoint (nil when none).
func (e *Engine) ReadState(ctx context.Context, id ID) ([]byte, error) {
	if id.IsZero() {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := e.getBlob(ctx, objects.ID(id))
	return b, translate(err, e.storeDir)
}
