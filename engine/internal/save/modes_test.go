package save

import (
	"testing"

	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

func TestCarriedMode(t *testing.T) {
	a, b := objects.Sum([]byte("a")), objects.Sum([]byte("b"))
	file := func(mode uint32, id objects.ID) *objects.Entry {
		return &objects.Entry{Kind: objects.KindFile, Mode: mode, ID: id}
	}
	cases := []struct {
		name string
		k    walker.Kind
		fs   uint32
		id   objects.ID
		prev *objects.Entry
		want uint32
	}{
		{"new file", walker.KindFile, 0o644, a, nil, 0o644},
		{"unchanged executable", walker.KindFile, 0o644, a, file(0o755, a), 0o755},
		{"unchanged private", walker.KindFile, 0o644, a, file(0o600, a), 0o600},
		{"changed executable", walker.KindFile, 0o644, b, file(0o700, a), 0o755},
		{"changed plain", walker.KindFile, 0o644, b, file(0o600, a), 0o644},
		{"made read-only", walker.KindFile, 0o444, a, file(0o755, a), 0o555},
		{"still read-only", walker.KindFile, 0o444, a, file(0o444, a), 0o444},
		{"made writable", walker.KindFile, 0o644, a, file(0o444, a), 0o644},
		{"was a directory", walker.KindFile, 0o644, a, &objects.Entry{Kind: objects.KindDir, Mode: 0o700}, 0o644},
		{"directory", walker.KindDir, 0o755, a, &objects.Entry{Kind: objects.KindDir, Mode: 0o700}, 0o700},
		{"symlink", walker.KindSymlink, 0o644, a, &objects.Entry{Kind: objects.KindSymlink, Mode: 0o777, ID: a}, 0o644},
	}
	for _, c := range cases {
		if got := carriedMode(c.k, c.fs, c.id, c.prev); got != c.want {
			t.Errorf("%s: mode %o, want %o", c.name, got, c.want)
		}
	}
}
