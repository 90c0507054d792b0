package save

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

// Root is one directory of a multi-root workspace. Its files are saved
// under Name: the snapshot's root tree holds one directory entry per root,
// whose subtree is what a single-root scan of Dir would make, and the stat
// cache records its directories under Name too.
type Root struct {
	Name string // a valid tree entry name, unique in the workspace
	Dir  string // canonical absolute path
}

// abs is the absolute path of the path rel a scan found: under
// Workspace, or in a multi-root workspace under the directory of the
// root its first element names (a scan names no other).
func (st *Store) abs(rel string) string {
	if len(st.Roots) == 0 {
		return filepath.Join(st.Workspace, filepath.FromSlash(rel))
	}
	name, rest, _ := strings.Cut(rel, "/")
	i := slices.IndexFunc(st.Roots, func(r Root) bool { return r.Name == name })
	return filepath.Join(st.Roots[i].Dir, filepath.FromSlash(rest))
}

// scanRoots is Scan of a multi-root workspace: each root is walked as a
// workspace of its own (its own ignore files, nested repositories and
// store exclusion), its paths prefixed by its name, and the root tree
// lists the roots. A root outside only (when only is not empty) keeps its
// subtree from base, unless base lacks it: then it is walked all the same,
// so a checkpoint always holds every root.
func (st *Store) scanRoots(ctx context.Context, s *scanner, base objects.ID, only []string) (*Snapshot, error) {
	kept, err := st.keptRoots(base, only)
	if err != nil {
		return nil, err
	}
	set, err := st.DB.LoadDirCaches()
	if err != nil {
		return nil, err
	}
	s.cached = set
	top := objects.Tree{Entries: make([]objects.Entry, 0, len(st.Roots))}
	for _, r := range st.Roots {
		if ent, ok := kept[r.Name]; ok {
			s.snap.partial.Store(true) // its files are not counted
			top.Entries = append(top.Entries, ent)
			continue
		}
		var mode uint32
		visit := func(ctx context.Context, d *walker.Dir, sub map[string]objects.ID) (objects.ID, error) {
			if d.Path == "" {
				mode = d.Mode // visited last, once
			}
			named := *d
			named.Path = path.Join(r.Name, d.Path)
			return s.visit(ctx, &named, sub)
		}
		id, skipped, err := walker.Walk(ctx, r.Dir, st.Walk, visit)
		if err != nil {
			return nil, fmt.Errorf("root %s: %w", r.Name, err)
		}
		for i := range skipped {
			skipped[i].Path = path.Join(r.Name, skipped[i].Path)
		}
		s.snap.Skipped = append(s.snap.Skipped, skipped...)
		top.Entries = append(top.Entries, objects.Entry{Name: r.Name, Kind: objects.KindDir, Mode: mode, ID: id})
	}
	slices.SortFunc(top.Entries, func(a, b objects.Entry) int { return strings.Compare(a.Name, b.Name) })
	tid, err := index.TreeID(top)
	if err != nil {
		return nil, err
	}
	s.snap.Trees[tid] = top
	if !base.IsZero() {
		s.snap.Bases[tid] = base
	}
	s.snap.Root = tid
	sortSkipped(s.snap.Skipped)
	return s.snap, nil
}

// keptRoots returns the root entries of base for the roots that only
// leaves out (none when only is empty or base is zero).
func (st *Store) keptRoots(base objects.ID, only []string) (map[string]objects.Entry, error) {
	kept := map[string]objects.Entry{}
	if len(only) == 0 || base.IsZero() {
		return kept, nil
	}
	t, err := st.DB.Tree(base)
	if err != nil {
		return nil, err
	}
	for _, ent := range t.Entries {
		if ent.Kind == objects.KindDir && !slices.Contains(only, ent.Name) {
			kept[ent.Name] = ent
		}
	}
	return kept, nil
}
