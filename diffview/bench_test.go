package diffview

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// BenchmarkCompare100k compares two 100,000-file trees (100 directories of
// 10 subdirectories of 100 files) that differ in 100 files.
func BenchmarkCompare100k(b *testing.B) {
	s := newMemStore()
	fx := wideFixture(100, 1000)
	from := s.build(fx)
	keys := sortedKeys(fx)
	r := rand.New(rand.NewSource(1))
	for _, i := range r.Perm(len(keys))[:100] {
		fx[keys[i]] = "changed\n"
	}
	to := s.build(fx)
	b.ResetTimer()
	for b.Loop() {
		changes, err := Compare(context.Background(), s, from, to, nil)
		if err != nil || len(changes) != 100 {
			b.Fatalf("%d changes, err %v", len(changes), err)
		}
	}
}

// BenchmarkPatchLargeFile writes the patch of a 20,000-line file (the
// default line limit) with scattered edits.
func BenchmarkPatchLargeFile(b *testing.B) {
	var before, after strings.Builder
	for i := 0; i < DefaultMaxLines; i++ {
		fmt.Fprintf(&before, "line %d of the file\n", i)
		if i%500 == 0 {
			fmt.Fprintf(&after, "edited line %d\n", i)
		} else {
			fmt.Fprintf(&after, "line %d of the file\n", i)
		}
	}
	s := newMemStore()
	from, to := s.build(fixture{"f": before.String()}), s.build(fixture{"f": after.String()})
	changes, err := Compare(context.Background(), s, from, to, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		var sb strings.Builder
		if err := WritePatch(&sb, changes, s, s, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
