package diffview

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pmezard/go-difflib/difflib"
)

// numbered is n lines, line i holding i%mod, with edits replacing some.
func numbered(n, mod int, edits map[int]string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintln(i % mod)
		if e, ok := edits[i]; ok {
			out[i] = e
		}
	}
	return out
}

// Two one-line edits far apart in a file of few distinct lines (a long
// JSON file's braces) are two changed lines, not a rewrite of all between,
// and the stat counts what the patch shows, at every context.
func TestHunksStayMinimalWhereLinesRepeat(t *testing.T) {
	t.Parallel()
	var jsonA, jsonB []string
	for i := range 60 {
		entry := []string{"  {\n", fmt.Sprintf("    \"id\": %d,\n", i%11), "    \"tags\": [\n", "      \"x\"\n", "    ]\n", "  },\n"}
		jsonA = append(jsonA, entry...)
		if i == 2 {
			entry[1] = "    \"id\": 99,\n"
		}
		if i == 55 {
			entry = append(entry, "  // note\n")
		}
		jsonB = append(jsonB, entry...)
	}
	for _, tc := range []struct {
		name     string
		a, b     []string
		ins, del int
	}{
		{"300 lines of ten", numbered(300, 10, nil), numbered(300, 10, map[int]string{10: "X\n", 290: "Y\n"}), 2, 2},
		{"a JSON array", jsonA, jsonB, 2, 1},
	} {
		for _, context := range []int{0, 3, 10} {
			if ins, del := countChanges(groupedOpCodes(tc.a, tc.b, context)); ins != tc.ins || del != tc.del {
				t.Errorf("%s, context %d: +%d -%d, want +%d -%d", tc.name, context, ins, del, tc.ins, tc.del)
			}
		}
	}
}

// The stat and the patch come from one edit: the lines a hunk adds and
// removes are the same at every context, and the hunks rebuild b from a.
func TestHunksAgreeAtEveryContext(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 9))
	random := func() []string {
		out := make([]string, rng.IntN(9))
		for i := range out {
			out[i] = string(rune('a'+rng.IntN(3))) + "\n"
		}
		return out
	}
	pairs := [][2][]string{{strings.SplitAfter("c\nc\nc\na\na\n", "\n")[:5], strings.SplitAfter("c\nb\na\na\nc\nc\n", "\n")[:6]}}
	for range 400 {
		pairs = append(pairs, [2][]string{random(), random()})
	}
	for _, p := range pairs {
		a, b := p[0], p[1]
		wantIns, wantDel := countChanges(groupedOpCodes(a, b, 0))
		for _, context := range []int{1, 3, 10} {
			groups := groupedOpCodes(a, b, context)
			if ins, del := countChanges(groups); ins != wantIns || del != wantDel {
				t.Fatalf("%q -> %q, context %d: +%d -%d, at context 0 +%d -%d", a, b, context, ins, del, wantIns, wantDel)
			}
			if got := rebuild(a, b, groups); got != strings.Join(b, "") {
				t.Fatalf("%q -> %q, context %d: the hunks rebuild %q", a, b, context, got)
			}
		}
	}
}

// rebuild applies groups, hunks of a -> b, to a.
func rebuild(a, b []string, groups [][]difflib.OpCode) string {
	var out strings.Builder
	at := 0
	for _, g := range groups {
		for _, op := range g {
			for ; at < op.I1; at++ {
				out.WriteString(a[at])
			}
			if op.Tag == 'e' {
				for i := op.I1; i < op.I2; i++ {
					out.WriteString(a[i])
				}
			} else {
				for j := op.J1; j < op.J2; j++ {
					out.WriteString(b[j])
				}
			}
			at = op.I2
		}
	}
	for ; at < len(a); at++ {
		out.WriteString(a[at])
	}
	return out.String()
}
