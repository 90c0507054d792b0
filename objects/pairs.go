package objects

import (
	"iter"
	"strings"
)

// Pairs walks two directories' entry lists (each sorted by name, as a
// Tree's are) side by side: it yields each name either list holds once, in
// byte order, with the entry of each side under that name (nil where a
// side has none). It compares each pair of names once, a name both sides
// hold included (the common case of two versions of a directory).
func Pairs(a, b []Entry) iter.Seq2[*Entry, *Entry] {
	return func(yield func(*Entry, *Entry) bool) {
		for len(a) > 0 || len(b) > 0 {
			var order int // < 0: a's name comes first; > 0: b's; 0: both sides hold it
			switch {
			case len(b) == 0:
				order = -1
			case len(a) == 0:
				order = 1
			default:
				order = strings.Compare(a[0].Name, b[0].Name)
			}
			var ea, eb *Entry
			if order <= 0 {
				ea, a = &a[0], a[1:]
			}
			if order >= 0 {
				eb, b = &b[0], b[1:]
			}
			if !yield(ea, eb) {
				return
			}
		}
	}
}
