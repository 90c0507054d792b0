package diffview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/objects"
)

// wideFixture returns a tree of dirs*files files spread over dirs
// directories, each two levels deep.
func wideFixture(dirs, files int) fixture {
	fx := fixture{}
	for d := 0; d < dirs; d++ {
		for f := 0; f < files; f++ {
			fx[fmt.Sprintf("d%03d/s%d/f%04d.txt", d, f%10, f)] = fmt.Sprintf("file %d %d\n", d, f)
		}
	}
	return fx
}

func TestCompareSkipsEqualSubtrees(t *testing.T) {
	s := newMemStore()
	fx := wideFixture(20, 30)
	from := s.build(fx)
	fx["d007/s3/f0013.txt"] = "changed\n"
	to := s.build(fx)
	s.treeCalls = 0
	changes, err := Compare(context.Background(), s, from, to, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Path != "d007/s3/f0013.txt" || changes[0].Status != StatusModified {
		t.Fatalf("changes = %+v", changes)
	}
	// root, d007 and d007/s3 on each side; nothing else.
	if s.treeCalls != 6 {
		t.Errorf("Tree called %d times, want 6", s.treeCalls)
	}
	if s.blobCalls.Load() != 0 {
		t.Errorf("Compare loaded %d blobs, want none", s.blobCalls.Load())
	}
	s.treeCalls = 0
	if changes, err := Compare(context.Background(), s, from, from, nil); err != nil || len(changes) != 0 || s.treeCalls != 0 {
		t.Errorf("equal roots: changes %v, err %v, %d tree loads", changes, err, s.treeCalls)
	}
}

func TestCompareEmptyTreeAndFilters(t *testing.T) {
	s := newMemStore()
	root := s.build(fixture{"a/x": "1", "a/y/z": "2", "ab": "3", "b": "4", "emptydir/": ""})
	tests := []struct {
		filters []string
		want    []string
	}{
		{nil, []string{"a/x", "a/y/z", "ab", "b"}},
		{[]string{"."}, []string{"a/x", "a/y/z", "ab", "b"}},
		{[]string{"a"}, []string{"a/x", "a/y/z"}},
		{[]string{"./a/y/", "b"}, []string{"a/y/z", "b"}},
		{[]string{"a/x/more"}, nil},
		{[]string{"emptydir"}, nil},
	}
	for _, tc := range tests {
		got, err := Compare(context.Background(), s, objects.ID{}, root, tc.filters)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, c := range got {
			if c.Status != StatusAdded || c.Before != nil || c.After == nil {
				t.Errorf("%s: %+v is not an addition", c.Path, c)
			}
			paths = append(paths, c.Path)
		}
		if strings.Join(paths, ",") != strings.Join(tc.want, ",") {
			t.Errorf("filters %q: got %q, want %q", tc.filters, paths, tc.want)
		}
	}
	for _, bad := range []string{"/abs", "../up", ".."} {
		if _, err := Compare(context.Background(), s, objects.ID{}, root, []string{bad}); !errors.Is(err, ErrBadFilter) {
			t.Errorf("filter %q: err = %v, want ErrBadFilter", bad, err)
		}
	}
}

func TestCompareErrors(t *testing.T) {
	s := newMemStore()
	root := s.build(fixture{"dir/f": "x"})
	missing := objects.Sum([]byte("missing"))
	if _, err := Compare(context.Background(), s, root, missing, nil); !errors.Is(err, errNotFound) {
		t.Errorf("missing tree: err = %v, want errNotFound wrapped", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Compare(ctx, s, objects.ID{}, root, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
	for _, entries := range [][]objects.Entry{
		{{Name: "b", Kind: objects.KindFile}, {Name: "a", Kind: objects.KindFile}},
		{{Name: "../x", Kind: objects.KindFile}},
		{{Name: "a", Kind: 9}},
	} {
		bad := s.putTree(objects.Tree{Entries: entries})
		if _, err := Compare(context.Background(), s, objects.ID{}, bad, nil); !errors.Is(err, objects.ErrCorrupt) {
			t.Errorf("entries %v: err = %v, want objects.ErrCorrupt", entries, err)
		}
	}
}

// prefixStore is a memStore whose blobs can also be read by prefix; it
// records the largest full load.
type prefixStore struct {
	*memStore
	maxFull int
}

func (p *prefixStore) LoadBlob(path string, id objects.ID) ([]byte, error) {
	b, err := p.memStore.LoadBlob(path, id)
	p.maxFull = max(p.maxFull, len(b))
	return b, err
}

func (p *prefixStore) LoadBlobPrefix(path string, id objects.ID, n int) ([]byte, error) {
	b, err := p.memStore.LoadBlob(path, id)
	return b[:min(n, len(b))], err
}

func TestTooLargeIsNotLoadedWhole(t *testing.T) {
	s := &prefixStore{memStore: newMemStore()}
	big := strings.Repeat("text line\n", 20000)
	from, to := s.build(fixture{"big": big}), s.build(fixture{"big": big + "more\n"})
	changes, err := Compare(context.Background(), s, from, to, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{MaxBytes: 1000}
	fj, err := Describe(changes[0], s, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !fj.TooLarge || fj.Binary || fj.Before != nil || fj.After != nil || changes[0].After.Size != int64(len(big)+5) {
		t.Errorf("Describe = %+v, after size %d", fj, changes[0].After.Size)
	}
	var patch bytes.Buffer
	if err := WritePatch(&patch, changes, s, s, opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(patch.String(), "Binary files a/big and b/big differ\n") {
		t.Errorf("patch:\n%s", patch.String())
	}
	if s.maxFull != 0 {
		t.Errorf("a blob of %d bytes was loaded whole", s.maxFull)
	}
}

func TestIsBinary(t *testing.T) {
	late := append(bytes.Repeat([]byte("a"), binarySniffLen), 0)
	for _, tc := range []struct {
		data []byte
		want bool
	}{
		{nil, false}, {[]byte("plain\n"), false}, {[]byte("a\x00b"), true},
		{late, false}, {late[1:], true}, {[]byte("\xff\xfe utf-16ish"), false},
	} {
		if got := IsBinary(tc.data); got != tc.want {
			t.Errorf("IsBinary(%.20q...) = %v, want %v", tc.data, got, tc.want)
		}
	}
}

func TestQuotePath(t *testing.T) {
	for in, want := range map[string]string{
		"plain/file.txt": "plain/file.txt",
		"with space":     "with space",
		"tab\there":      `"tab\there"`,
		`q"b\`:           `"q\"b\\"`,
		"café":           `"caf\303\251"`,
		"nl\nbell\a\x01": `"nl\nbell\a\001"`,
		"del\x7f":        `"del\177"`,
	} {
		if got := QuotePath(in); got != want {
			t.Errorf("QuotePath(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestRenameLabel(t *testing.T) {
	for _, tc := range [][3]string{
		{"a.txt", "b.txt", "a.txt => b.txt"},
		{"dir/a.txt", "dir/b.txt", "dir/{a.txt => b.txt}"},
		{"x/sub/f", "y/sub/f", "{x => y}/sub/f"},
		{"a/b/c", "a/c", "a/{b/c => c}"},
		{"é", "e", `"\303\251" => e`},
	} {
		if got := renameLabel(tc[0], tc[1]); got != tc[2] {
			t.Errorf("renameLabel(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}
