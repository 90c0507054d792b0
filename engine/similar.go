package engine

import (
	"cmp"
	"context"
	"path"
	"slices"

	"github.com/ckpt/ckpt/objects"
)

// A first save's blobs are compressed after it (Options.DeferCompression),
// a slice of a deferred pack at a time. Workspaces often hold many versions
// of one file side by side: an SDK's API of each date under its own
// directory, vendored copies, v1 and v2 packages. Compressed each on its
// own, or in a group of whatever the walk put next to it, every copy costs
// what the first did; git's packs store all but one as deltas. The
// recompression offers each blob the files whose paths differ from its own
// only in their digits as delta bases (objects.Move.Bases), so that the
// copies cost what their differences do. On the pinned public modules
// (bench/realmods.txt) the packs of a recompressed first save take 6.3%
// less (195.2 MB against 208.4) for 22% more of the recompression's time
// (bench/README.md).

// similarMin and similarMax bound the files offered bases: those a delta
// record may hold (objects' deltaMin and deltaMax).
const (
	similarMin = 512
	similarMax = 1 << 20
)

// similarFiles indexes the files of the tasks' heads by their paths with
// each run of digits made one '#': files of one key, in path order, are
// each other's likely delta bases.
type similarFiles struct {
	heads []objects.ID // the checkpoints whose trees were indexed
	ids   []objects.ID // every indexed file's blob, by key, then path
	sizes []int64
	keys  []int32 // the key's number, for each position
	at    map[objects.ID]int32
}

// similarFile is one file of a head while the index is built.
type similarFile struct {
	key, path string
	id        objects.ID
	size      int64
}

// newSimilarFiles walks the trees of every task's head (each tree once),
// checking ctx between trees. It is an aid, not a duty: the index of what
// could be read stands when a tree or a checkpoint cannot be (verify
// reports the damage), and only ctx's end is an error.
func (e *Engine) newSimilarFiles(ctx context.Context) (*similarFiles, error) {
	seen := map[objects.ID]bool{}
	var files []similarFile
	var walk func(dir string, id objects.ID) error
	walk = func(dir string, id objects.ID) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if seen[id] {
			return nil
		}
		seen[id] = true
		t, err := e.db.SharedTree(id)
		if err != nil {
			return nil
		}
		for _, ent := range t.Entries {
			p := path.Join(dir, ent.Name)
			switch {
			case ent.Kind == objects.KindDir:
				if err := walk(p, ent.ID); err != nil {
					return err
				}
			case ent.Kind == objects.KindFile && ent.Size >= similarMin && ent.Size <= similarMax:
				files = append(files, similarFile{key: digitsFolded(p), path: p, id: ent.ID, size: ent.Size})
			}
		}
		return nil
	}
	var heads []objects.ID
	tasks, _ := e.db.Tasks()
	for _, name := range tasks {
		head, ok, err := e.db.Task(name)
		if err != nil || !ok {
			continue
		}
		cp, err := e.db.Checkpoint(head.Head)
		if err != nil {
			continue
		}
		heads = append(heads, head.Head)
		if err := walk("", cp.Root); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(files, func(a, b similarFile) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.path, b.path)) })
	s := &similarFiles{heads: heads, at: make(map[objects.ID]int32, len(files))}
	key := int32(-1)
	for i, f := range files {
		if i == 0 || f.key != files[i-1].key {
			key++
		}
		if _, dup := s.at[f.id]; dup {
			continue
		}
		s.at[f.id] = int32(len(s.ids))
		s.ids, s.sizes, s.keys = append(s.ids, f.id), append(s.sizes, f.size), append(s.keys, key)
	}
	return s, nil
}

// stillLive reports whether every checkpoint s indexed is still in the
// store. A dropped one may have taken the last reference to some of the
// files s offers as bases: a delta against such a file would keep it
// (a collection keeps every delta's base), so s is built again.
func (s *similarFiles) stillLive(e *Engine) bool {
	for _, id := range s.heads {
		if _, err := e.db.Checkpoint(id); err != nil {
			return false
		}
	}
	return true
}

// digitsFolded returns p with each run of ASCII digits replaced by '#'.
func digitsFolded(p string) string {
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < '0' || c > '9' {
			out = append(out, c)
		} else if i == 0 || p[i-1] < '0' || p[i-1] > '9' {
			out = append(out, '#')
		}
	}
	return string(out)
}

// bases returns the delta bases offered to blob id, nearest first: the two
// files of its key before it in path order, then the one after it (taken
// when the ones before are not yet compressed), each within half to twice
// its size. Nil when id is not indexed.
func (s *similarFiles) bases(id objects.ID) []objects.ID {
	i, ok := s.at[id]
	if !ok {
		return nil
	}
	var out []objects.ID
	for _, j := range [...]int32{i - 1, i - 2, i + 1} {
		if j < 0 || int(j) >= len(s.ids) || s.keys[j] != s.keys[i] {
			continue
		}
		if a, b := s.sizes[i], s.sizes[j]; b*2 < a || b > 2*a {
			continue
		}
		out = append(out, s.ids[j])
	}
	return out
}
