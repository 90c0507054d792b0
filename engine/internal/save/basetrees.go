package save

import (
	"path"
	"sync"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// baseTrees reads the directories of a scan's base checkpoint (the one
// the workspace is measured against), each once: what a scan carries from
// it (modes where the file system has none) and the previous version of
// a file the stat cache does not know.
type baseTrees struct {
	db   *index.DB
	root objects.ID // zero: no base
	mu   sync.Mutex
	dirs map[string]map[string]objects.Entry // entries by directory and name; nil: not in the base
}

func newBaseTrees(db *index.DB, root objects.ID) *baseTrees {
	return &baseTrees{db: db, root: root, dirs: map[string]map[string]objects.Entry{}}
}

// entries returns the base checkpoint's entries of directory dir, by name
// (nil when the base has no such directory).
func (b *baseTrees) entries(dir string) (map[string]objects.Entry, error) {
	b.mu.Lock()
	got, ok := b.dirs[dir]
	b.mu.Unlock()
	if ok {
		return got, nil
	}
	id := b.root
	if dir != "" {
		parent, err := b.entries(parentDir(dir))
		if err != nil {
			return nil, err
		}
		e, ok := parent[path.Base(dir)]
		if !ok || e.Kind != objects.KindDir {
			id = objects.ID{}
		} else {
			id = e.ID
		}
	}
	var m map[string]objects.Entry
	if !id.IsZero() {
		t, err := b.db.Tree(id)
		if err != nil {
			return nil, err
		}
		m = make(map[string]objects.Entry, len(t.Entries))
		for _, e := range t.Entries {
			m[e.Name] = e
		}
	}
	b.mu.Lock()
	b.dirs[dir] = m
	b.mu.Unlock()
	return m, nil
}

// parentDir is the directory holding dir ("" for the root).
func parentDir(dir string) string {
	if p := path.Dir(dir); p != "." {
		return p
	}
	return ""
}
