package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ckpt/ckpt/objects"
)

// scratchDir is a directory that shows one checkpoint after another (a
// bisect's steps), rewritten by difference. What runs in it between steps
// may change the files it was given: each file's stat is recorded after it
// is written, and when any recorded file changed or vanished the directory
// is emptied and written whole, so every step sees exactly its checkpoint's
// files (plus whatever new files the runs left, as in a git work tree).
type scratchDir struct {
	exporter
	stamps map[string]fileStamp
}

// fileStamp is what tells a file was changed after it was written.
type fileStamp struct {
	size  int64
	mode  fs.FileMode
	mtime time.Time
}

func stampOf(fi fs.FileInfo) fileStamp {
	return fileStamp{size: fi.Size(), mode: fi.Mode(), mtime: fi.ModTime()}
}

// show makes the directory hold tree root.
func (s *scratchDir) show(ctx context.Context, root objects.ID) error {
	if s.root != root && !s.intact() {
		if err := s.empty(); err != nil {
			return err
		}
	}
	res, err := s.to(ctx, root)
	if err != nil {
		return err
	}
	if len(res.Conflicts) > 0 {
		c := res.Conflicts[0]
		return fmt.Errorf("scratch directory %s: %s: %s", s.dir, c.Path, c.Reason)
	}
	return s.record()
}

// intact reports whether every file recorded after the last write still
// has the stat it had then.
func (s *scratchDir) intact() bool {
	for rel, st := range s.stamps {
		fi, err := os.Lstat(filepath.Join(s.dir, filepath.FromSlash(rel)))
		if err != nil || stampOf(fi) != st {
			return false
		}
	}
	return true
}

// record takes the stat of every file and symlink the directory holds.
func (s *scratchDir) record() error {
	s.stamps = map[string]fileStamp{}
	return filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(s.dir, p)
		s.stamps[filepath.ToSlash(rel)] = stampOf(fi)
		return err
	})
}

// empty removes everything in the directory; the next write is whole.
func (s *scratchDir) empty() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("scratch directory: %w", err)
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, os.RemoveAll(filepath.Join(s.dir, e.Name())))
	}
	s.root, s.stamps = objects.ID{}, nil
	return errors.Join(errs...)
}
