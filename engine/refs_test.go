package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

func TestResolveRefForms(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "1"}})
	var ids []ID
	for i := 0; i < 3; i++ {
		f.write("a", strings.Repeat("x", i+2))
		ids = append(ids, f.save("step").ID)
	}
	cases := map[string]ID{
		"HEAD":                                ids[2],
		"HEAD~0":                              ids[2],
		"HEAD~1":                              ids[1],
		"HEAD^":                               ids[1],
		"HEAD~":                               ids[1],
		"HEAD~2":                              ids[0],
		"@1":                                  ids[0],
		"@3":                                  ids[2],
		ids[1].String():                       ids[1],
		ids[1].String()[:4]:                   ids[1],
		strings.ToUpper(ids[0].String()[:10]): ids[0],
	}
	for ref, want := range cases {
		got, err := f.e.Resolve(context.Background(), "", ref)
		if err != nil || got != want {
			// A 4-character prefix may collide; only then is an ambiguity error acceptable.
			var amb *AmbiguousRefError
			if len(ref) == 4 && errors.As(err, &amb) {
				continue
			}
			t.Errorf("Resolve(%q) = %s, %v; want %s", ref, got.Short(), err, want.Short())
		}
	}
	for _, ref := range []string{"", "HEAD~3", "@0", "@4", "@x", "abc", "zzzz", "HEAD~-1", "HEAD^2", "deadbeef"} {
		if _, err := f.e.Resolve(context.Background(), "", ref); !errors.Is(err, ErrUnknownRef) {
			t.Errorf("Resolve(%q): err = %v, want ErrUnknownRef", ref, err)
		}
	}
	if _, err := f.e.Resolve(context.Background(), "nosuchtask", "HEAD"); !errors.Is(err, ErrUnknownRef) {
		t.Errorf("HEAD of an empty task: %v", err)
	}
}

func TestResolveAmbiguousPrefixListsCandidates(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "1"}})
	seen := map[string]ID{}
	for i := 0; i < 5000; i++ {
		res, err := f.e.Save(context.Background(), SaveOptions{AllowEmpty: true})
		if err != nil {
			t.Fatal(err)
		}
		p := res.ID.String()[:4]
		other, dup := seen[p]
		if !dup {
			seen[p] = res.ID
			continue
		}
		_, err = f.e.Resolve(context.Background(), "", p)
		var amb *AmbiguousRefError
		if !errors.As(err, &amb) || !errors.Is(err, ErrUnknownRef) || len(amb.Candidates) != 2 {
			t.Fatalf("Resolve(%q) = %v, want an ambiguity between two", p, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, other.Short()) || !strings.Contains(msg, res.ID.Short()) {
			t.Fatalf("message %q does not list both candidates", msg)
		}
		return
	}
	t.Fatal("no 4-character prefix collision in 5000 checkpoints")
}
