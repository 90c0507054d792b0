package corpus

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
)

// Mutation lists what Mutate changed, as slash paths relative to the root.
type Mutation struct {
	Modified []string // existing text files edited in place (sorted)
	Added    []string // new text files (sorted)
}

// Mutate applies the same agent-like change to the corpus every time it is
// called on the same content: it edits `edits` distinct text files (a line
// inserted mid-file and the last line rewritten) and adds `added` new source
// files in existing directories. Restoring the corpus's previous content and
// calling Mutate again reproduces the same bytes.
func Mutate(m *Manifest, seed uint64, edits, added int) (Mutation, error) {
	if edits > len(m.Text) {
		return Mutation{}, fmt.Errorf("corpus: %d edits asked of %d text files", edits, len(m.Text))
	}
	rng := rand.New(rand.NewPCG(seed, 0xed17))
	var mu Mutation
	for _, i := range rng.Perm(len(m.Text))[:edits] {
		mu.Modified = append(mu.Modified, m.Text[i])
	}
	slices.Sort(mu.Modified)
	for i, p := range mu.Modified {
		if err := editFile(filepath.Join(m.Root, filepath.FromSlash(p)), rng, i); err != nil {
			return Mutation{}, err
		}
	}
	for i := range added {
		p := fmt.Sprintf("%s/feature_new_%d.ts", m.Dirs[rng.IntN(len(m.Dirs))], i)
		buf := writeText(nil, rng, logNormal(rng, 3000, 1.0, 16, 1<<20))
		if err := os.WriteFile(filepath.Join(m.Root, filepath.FromSlash(p)), buf, 0o644); err != nil {
			return Mutation{}, fmt.Errorf("corpus: %w", err)
		}
		mu.Added = append(mu.Added, p)
	}
	slices.Sort(mu.Added)
	return mu, nil
}

// editFile inserts a generated line in the middle of the file and replaces
// its last 16 bytes, keeping its mode.
func editFile(name string, rng *rand.Rand, n int) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	mid := len(data) / 2
	line := writeText([]byte(fmt.Sprintf("// edit %d: ", n)), rng, 60)
	out := make([]byte, 0, len(data)+len(line)+1)
	out = append(out, data[:mid]...)
	out = append(out, line...)
	out = append(out, '\n')
	out = append(out, data[mid:]...)
	tail := min(16, len(out))
	copy(out[len(out)-tail:], "/* edited end */"[:tail])
	if err := os.WriteFile(name, out, 0o644); err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	return nil
}
