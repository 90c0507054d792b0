package remote

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ckpt/ckpt/internal/osfs"
)

// maxPage is the largest page List returns, S3's limit.
const maxPage = 1000

// List walks the directories under the prefix's last slash in key order,
// skipping whole subtrees that sort before after, and stops one object past
// the page, so a page costs about its own size in reads whatever the total.
func (b *fileBackend) List(ctx context.Context, prefix, after string, limit int) (ListPage, error) {
	if err := validPrefix(prefix); err != nil {
		return ListPage{}, err
	}
	if limit <= 0 || limit > maxPage {
		limit = maxPage
	}
	dirKey := prefix[:strings.LastIndexByte(prefix, '/')+1]
	dir := b.root
	if dirKey != "" {
		dir = keyPath(b.root, strings.TrimSuffix(dirKey, "/"))
	}
	l := lister{ctx: ctx, prefix: prefix, after: after, want: limit + 1}
	if err := l.walk(dir, dirKey); err != nil {
		return ListPage{}, fmt.Errorf("remote: list %q: %w", prefix, err)
	}
	page := ListPage{Objects: l.found}
	if len(page.Objects) > limit {
		page.Objects = page.Objects[:limit]
		page.Next = page.Objects[limit-1].Key
	}
	return page, nil
}

type lister struct {
	ctx           context.Context
	prefix, after string
	want          int
	found         []ObjectInfo
}

type listEntry struct {
	key  string // the full key, with a trailing slash for a directory
	name string // the file name
	dir  bool
}

// walk lists the directory dir, which holds the keys that start with
// dirKey, and descends in key order until it has found want objects.
func (l *lister) walk(dir, dirKey string) error {
	if err := l.ctx.Err(); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var list []listEntry
	for _, e := range ents {
		seg, ok := unescapeSegment(e.Name())
		if !ok || !e.IsDir() && !e.Type().IsRegular() {
			continue
		}
		key := dirKey + seg
		if e.IsDir() {
			key += "/"
		}
		list = append(list, listEntry{key: key, name: e.Name(), dir: e.IsDir()})
	}
	slices.SortFunc(list, func(a, b listEntry) int { return strings.Compare(a.key, b.key) })
	for _, e := range list {
		if len(l.found) == l.want {
			return nil
		}
		if !l.mayHold(e) {
			continue
		}
		path := filepath.Join(dir, e.name)
		if e.dir {
			if err := l.walk(path, e.key); err != nil {
				return err
			}
			continue
		}
		if err := l.add(path, e.key); err != nil {
			return err
		}
	}
	return nil
}

// mayHold reports whether e, or for a directory some key below it, starts
// with the prefix and sorts after l.after.
func (l *lister) mayHold(e listEntry) bool {
	if !e.dir {
		return strings.HasPrefix(e.key, l.prefix) && e.key > l.after
	}
	if !strings.HasPrefix(e.key, l.prefix) && !strings.HasPrefix(l.prefix, e.key) {
		return false
	}
	// Every key below e is greater than e.key and starts with it, so all
	// of them sort at or before after when after is past e.key without
	// starting with it.
	return e.key > l.after || strings.HasPrefix(l.after, e.key)
}

// add appends the object in file path; one deleted since the directory was
// read is skipped.
func (l *lister) add(path, key string) error {
	f, err := osfs.OpenShared(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := describe(f, key)
	if err != nil {
		return err
	}
	l.found = append(l.found, info)
	return nil
}
