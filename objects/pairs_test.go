package objects

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPairs walks random pairs of sorted entry lists (names sharing long
// prefixes, one list empty, both the same) and checks that each name
// either side holds comes once, in byte order, with each side's own entry
// or nil.
func TestPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	list := func(n int) []Entry {
		var es []Entry
		for i := range n {
			if rng.IntN(3) > 0 {
				es = append(es, Entry{Name: fmt.Sprintf("common/prefix/name_%03d", i), Kind: KindFile, Size: int64(rng.IntN(4))})
			}
		}
		return es
	}
	for round := range 200 {
		a, b := list(rng.IntN(40)), list(rng.IntN(40))
		if round%10 == 0 {
			b = slices.Clone(a)
		}
		byName := map[string][2]*Entry{}
		for i := range a {
			byName[a[i].Name] = [2]*Entry{&a[i], nil}
		}
		for i := range b {
			p := byName[b[i].Name]
			p[1] = &b[i]
			byName[b[i].Name] = p
		}
		var names []string
		for ea, eb := range Pairs(a, b) {
			name := ea
			if name == nil {
				name = eb
			}
			if want := byName[name.Name]; want != [2]*Entry{ea, eb} {
				t.Fatalf("round %d: %q paired %v, %v; want %v", round, name.Name, ea, eb, want)
			}
			names = append(names, name.Name)
		}
		if !slices.IsSorted(names) || len(names) != len(byName) || len(slices.Compact(slices.Clone(names))) != len(names) {
			t.Fatalf("round %d: names %q; want the %d names of both sides once each, sorted", round, names, len(byName))
		}
	}
}
