package diffview

import (
	"path"
	"slices"

	"github.com/ckpt/ckpt/objects"
)

// pairRenames merges each added change whose blob id and kind match a
// deleted change into one renamed change, pairing as git's exact rename
// detection does where several match: additions in path order, each with
// the first unpaired deletion of the same base name, else the first
// unpaired one in path order. changes must be sorted by Path; the result
// stays sorted by the new path.
func pairRenames(changes []Change) []Change {
	type key struct {
		id   objects.ID
		kind objects.Kind
	}
	deleted := make(map[key][]int)
	for i, c := range changes {
		if c.Status == StatusDeleted {
			k := key{c.Before.ID, c.Before.Kind}
			deleted[k] = append(deleted[k], i)
		}
	}
	if len(deleted) == 0 {
		return changes
	}
	paired := make([]bool, len(changes))
	for i, c := range changes {
		if c.Status != StatusAdded {
			continue
		}
		k := key{c.After.ID, c.After.Kind}
		q := deleted[k]
		if len(q) == 0 {
			continue
		}
		n := max(slices.IndexFunc(q, func(j int) bool { return path.Base(changes[j].Path) == path.Base(c.Path) }), 0)
		j := q[n]
		deleted[k] = slices.Delete(q, n, n+1)
		paired[j] = true
		changes[i] = Change{
			Path:    c.Path,
			OldPath: changes[j].Path,
			Status:  StatusRenamed,
			Before:  changes[j].Before,
			After:   c.After,
		}
	}
	out := changes[:0]
	for i, c := range changes {
		if !paired[i] {
			out = append(out, c)
		}
	}
	return out
}
