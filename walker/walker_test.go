package walker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// hang bounds a walk that must end: far beyond what the slowest run takes
// (two loaded cores, -race). It is internal/testbound.Hang; the walker's
// tests, like the walker, import nothing of ckpt.
const hang = 3 * time.Minute

func mustWalk(t *testing.T, root string, opts Options) walkResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	res, err := walkAll(t, ctx, root, opts)
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
	return res
}

func skippedByPath(res walkResult) map[string]string {
	m := map[string]string{}
	for _, s := range res.skipped {
		m[s.Path] = s.Reason
	}
	return m
}

func TestNestedRepositories(t *testing.T) {
	root := t.TempDir()
	tree{
		".git/HEAD": "ref", ".git/info/exclude": "excluded\n", "excluded": "x", "top": "x",
		"sub/.git/HEAD": "ref", "sub/.git/objects/x": "x", "sub/code.go": "x",
		"mod/.git": "gitdir: ../.git/modules/mod", "mod/lib.go": "x",
		"deep/er/.git/config": "x", "deep/er/main.c": "x",
	}.write(t, root)
	res := mustWalk(t, root, Options{})
	want := []string{"deep/er/main.c", "mod/lib.go", "sub/code.go", "top"}
	if !slices.Equal(res.files, want) {
		t.Fatalf("files = %q, want %q", res.files, want)
	}
	for p := range res.entries {
		if strings.Contains("/"+p+"/", "/.git/") {
			t.Errorf("%s included", p)
		}
	}
}

func TestSymlinksNeverFollowed(t *testing.T) {
	root := t.TempDir()
	tree{
		"d/f": "x", "d/loop": "->..", "self": "->self", "dangling": "->nowhere/at/all",
		"todir": "->d", "abs": "->/etc",
	}.write(t, root)
	res := mustWalk(t, root, Options{})
	wantFiles := []string{"abs", "d/f", "d/loop", "dangling", "self", "todir"}
	if !slices.Equal(res.files, wantFiles) {
		t.Fatalf("files = %q, want %q", res.files, wantFiles)
	}
	if !slices.Equal(res.dirs, []string{"d"}) {
		t.Fatalf("dirs = %q", res.dirs)
	}
	for name, target := range map[string]string{"d/loop": "..", "self": "self", "dangling": "nowhere/at/all", "abs": "/etc"} {
		e := res.entries[name]
		if e.Kind != KindSymlink || e.Target != target || e.Size != int64(len(target)) {
			t.Errorf("%s = %+v, want symlink to %q", name, e, target)
		}
	}
}

func TestSizeCap(t *testing.T) {
	root := t.TempDir()
	tree{"small": "12345", "big": "123456", "ignored.log": "1234567890", "link": "->0123456789"}.write(t, root)
	res := mustWalk(t, root, Options{MaxFileSize: 5, Extra: []string{"*.log"}})
	if !slices.Equal(res.files, []string{"link", "small"}) {
		t.Fatalf("files = %q", res.files)
	}
	if len(res.skipped) != 1 || res.skipped[0].Path != "big" || res.skipped[0].Reason != ReasonTooLarge {
		t.Fatalf("skipped = %+v", res.skipped)
	}
}

func TestUnreadableInjected(t *testing.T) {
	root := t.TempDir()
	tree{"a/secret/f": "x", "a/secret/sub/g": "x", "a/ok": "x", "b": "x", "c/locked.txt": "x", "c/open.txt": "x"}.write(t, root)
	h := &hooks{
		openDir: func(parent dirFD, name string) (dirFD, error) {
			if name == "secret" {
				var none dirFD
				return none, fs.ErrPermission
			}
			return openSub(parent, name)
		},
		access: func(dirfd dirFD, name string, mode uint32) error {
			if name == "locked.txt" {
				return fs.ErrPermission
			}
			return nil
		},
	}
	var visited, unread sync.Map
	_, skipped, err := Walk(context.Background(), root, Options{hooks: h}, func(_ context.Context, d *Dir, sub map[string]bool) (bool, error) {
		visited.Store(d.Path, d.Entries)
		unread.Store(d.Path, slices.Sorted(slices.Values(d.Unreadable)))
		for _, e := range d.Entries {
			if _, ok := sub[e.Name]; e.Kind == KindDir && !ok {
				return false, fmt.Errorf("entry %s/%s has no visited value", d.Path, e.Name)
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 2 || skipped[0].Path != "a/secret" || skipped[1].Path != "c/locked.txt" {
		t.Fatalf("skipped = %+v", skipped)
	}
	for _, s := range skipped {
		if s.Reason != ReasonUnreadable || !errors.Is(s.Err, fs.ErrPermission) || !strings.Contains(s.Err.Error(), s.Path) {
			t.Errorf("skipped %+v: want unreadable with a permission error naming the path", s)
		}
	}
	a, _ := visited.Load("a")
	if names := entryNames(a.([]Entry)); !slices.Equal(names, []string{"ok"}) {
		t.Fatalf("entries of a = %q: the unreadable directory must be dropped before a is visited", names)
	}
	if _, ok := visited.Load("a/secret"); ok {
		t.Fatal("unreadable directory visited")
	}
	// Each directory names the entries it left out as unreadable, for
	// its caller to keep what it knew of them.
	for dir, want := range map[string][]string{"": nil, "a": {"secret"}, "c": {"locked.txt"}} {
		got, _ := unread.Load(dir)
		if names, _ := got.([]string); !slices.Equal(names, want) {
			t.Errorf("Unreadable of %q = %q, want %q", dir, names, want)
		}
	}
}

func entryNames(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

func TestOddNames(t *testing.T) {
	root := t.TempDir()
	names := []string{"new\nline", "tab\there", "ünïcödé", "日本語", "emoji-🙂", "sp ace ", "-dash", "back\\slash", "\xff\xfe invalid utf8", "#hash", "!bang"}
	dir := "dir\n"
	if runtime.GOOS == "windows" {
		// Windows names hold no control characters, backslashes or
		// trailing spaces, and are UTF-16.
		names = slices.DeleteFunc(names, func(n string) bool { return !windowsName(n) })
		dir = "dir "
	}
	tr := tree{}
	for _, n := range names {
		tr[n] = n
		tr[dir+n+"/f"] = "x"
	}
	tr.write(t, root)
	res := mustWalk(t, root, Options{})
	want := []string{}
	for _, n := range names {
		want = append(want, n, dir+n+"/f")
	}
	slices.Sort(want)
	if !slices.Equal(res.files, want) {
		t.Fatalf("files = %q, want %q", res.files, want)
	}
}

func TestLargeDirectorySorted(t *testing.T) {
	root := t.TempDir()
	n := 10000 // several batches of getdents
	if runtime.GOOS == "windows" {
		n = 2000 // several of FindNextFile; creating each costs O(n) under Wine
	}
	for i := range n {
		name := filepath.Join(root, fmt.Sprintf("f%05d-%x", (i*7919)%n, i))
		if err := os.WriteFile(name, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var entries []Entry
	_, _, err := Walk(context.Background(), root, Options{}, func(_ context.Context, d *Dir, _ map[string]struct{}) (struct{}, error) {
		entries = slices.Clone(d.Entries)
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != n {
		t.Fatalf("%d entries, want %d", len(entries), n)
	}
	if !slices.IsSortedFunc(entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) }) {
		t.Fatal("entries not sorted by name")
	}
	wantMode := uint32(0o600)
	if runtime.GOOS == "windows" {
		wantMode = 0o644 // synthesised: Windows has no permission bits
	}
	if e := entries[0]; e.Kind != KindFile || e.Mode != wantMode || e.Ino == 0 || e.MtimeNs == 0 || e.CtimeNs == 0 {
		t.Fatalf("entry lacks stat data: %+v", e)
	}
}

func TestDeepTree(t *testing.T) {
	root := t.TempDir()
	const depth = 200
	p := root
	for i := range depth {
		p = filepath.Join(p, fmt.Sprintf("d%d", i%10))
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "leaf"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var order []string
	var mu sync.Mutex
	depthOf, _, err := Walk(context.Background(), root, Options{}, func(_ context.Context, d *Dir, sub map[string]int) (int, error) {
		mu.Lock()
		order = append(order, d.Path)
		mu.Unlock()
		best := 0
		for _, v := range sub {
			best = max(best, v+1)
		}
		return best, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if depthOf != depth || len(order) != depth+1 || order[len(order)-1] != "" {
		t.Fatalf("depth %d, %d visits, last %q", depthOf, len(order), order[len(order)-1])
	}
	for i := 1; i < len(order); i++ {
		if !strings.HasPrefix(order[i-1], order[i]) {
			t.Fatalf("visit of %q before its child %q", order[i], order[i-1])
		}
	}
}
