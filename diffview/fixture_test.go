package diffview

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/ckpt/ckpt/objects"
)

// fixture declares a tree: key "dir/f.txt" is a 0644 file with the value as
// content, "run.sh*" a 0755 file, "f!600" a file with mode 0600, "link@" a
// symlink whose target is the value, and "empty/" an empty directory.
type fixture map[string]string

var errNotFound = errors.New("memstore: not found")

// memStore is an in-memory TreeSource and BlobLoader that counts calls.
type memStore struct {
	trees     map[objects.ID]objects.Tree
	blobs     map[objects.ID][]byte
	treeCalls int
	blobCalls atomic.Int64 // patches load blobs concurrently
}

func newMemStore() *memStore {
	return &memStore{trees: map[objects.ID]objects.Tree{}, blobs: map[objects.ID][]byte{}}
}

func (s *memStore) Tree(id objects.ID) (objects.Tree, error) {
	s.treeCalls++
	t, ok := s.trees[id]
	if !ok {
		return objects.Tree{}, fmt.Errorf("tree %s: %w", id.Short(), errNotFound)
	}
	return t, nil
}

func (s *memStore) LoadBlob(path string, id objects.ID) ([]byte, error) {
	s.blobCalls.Add(1)
	b, ok := s.blobs[id]
	if !ok {
		return nil, fmt.Errorf("blob %s at %s: %w", id.Short(), path, errNotFound)
	}
	return b, nil
}

// putBlob stores data and returns its id.
func (s *memStore) putBlob(data []byte) objects.ID {
	id := objects.Sum(data)
	s.blobs[id] = data
	return id
}

// putTree stores t under an id derived from a test-only encoding of its
// entries (any injective encoding serves: equal trees get equal ids).
func (s *memStore) putTree(t objects.Tree) objects.ID {
	var buf []byte
	for _, e := range t.Entries {
		buf = append(buf, e.Name...)
		buf = append(buf, 0, byte(e.Kind))
		buf = binary.BigEndian.AppendUint32(buf, e.Mode)
		buf = binary.BigEndian.AppendUint64(buf, uint64(e.Size))
		buf = append(buf, e.ID[:]...)
	}
	id := objects.Sum(append([]byte("tree\x00"), buf...))
	s.trees[id] = t
	return id
}

// fixtureNode is a directory being assembled from fixture keys.
type fixtureNode struct {
	entries map[string]objects.Entry
	dirs    map[string]*fixtureNode
}

// build stores the trees and blobs of fx and returns the root tree id.
func (s *memStore) build(fx fixture) objects.ID {
	root := &fixtureNode{entries: map[string]objects.Entry{}, dirs: map[string]*fixtureNode{}}
	for key, val := range fx {
		dir, name, leaf := root, key, true
		if strings.HasSuffix(key, "/") {
			name, leaf = strings.TrimSuffix(key, "/"), false
		}
		parts := strings.Split(name, "/")
		for _, p := range parts[:len(parts)-1] {
			dir = dir.child(p)
		}
		last := parts[len(parts)-1]
		if !leaf {
			dir.child(last)
			continue
		}
		e := parseLeaf(last)
		e.Size = int64(len(val))
		e.ID = s.putBlob([]byte(val))
		dir.entries[e.Name] = e
	}
	return s.storeNode(root)
}

func (n *fixtureNode) child(name string) *fixtureNode {
	c, ok := n.dirs[name]
	if !ok {
		c = &fixtureNode{entries: map[string]objects.Entry{}, dirs: map[string]*fixtureNode{}}
		n.dirs[name] = c
	}
	return c
}

// parseLeaf decodes the kind and mode suffixes of a fixture name.
func parseLeaf(name string) objects.Entry {
	switch {
	case strings.HasSuffix(name, "@"):
		return objects.Entry{Name: strings.TrimSuffix(name, "@"), Kind: objects.KindSymlink, Mode: 0o777}
	case strings.HasSuffix(name, "*"):
		return objects.Entry{Name: strings.TrimSuffix(name, "*"), Kind: objects.KindFile, Mode: 0o755}
	}
	if i := strings.LastIndexByte(name, '!'); i >= 0 {
		m, err := strconv.ParseUint(name[i+1:], 8, 32)
		if err != nil {
			panic(fmt.Sprintf("fixture name %q: %v", name, err))
		}
		return objects.Entry{Name: name[:i], Kind: objects.KindFile, Mode: uint32(m)}
	}
	return objects.Entry{Name: name, Kind: objects.KindFile, Mode: 0o644}
}

func (s *memStore) storeNode(n *fixtureNode) objects.ID {
	var t objects.Tree
	for _, e := range n.entries {
		t.Entries = append(t.Entries, e)
	}
	for name, d := range n.dirs {
		t.Entries = append(t.Entries, objects.Entry{Name: name, Kind: objects.KindDir, Mode: 0o755, ID: s.storeNode(d)})
	}
	sort.Slice(t.Entries, func(i, j int) bool { return t.Entries[i].Name < t.Entries[j].Name })
	return s.putTree(t)
}

func sortedKeys(fx fixture) []string {
	keys := make([]string, 0, len(fx))
	for k := range fx {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
