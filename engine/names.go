package engine

import (
	"os"
	"sync"

	"github.com/ckpt/ckpt/internal/osfs"
)

// nameProbes remembers what the file system of each workspace directory
// does with names, by the directory's identity. A probe creates a file in
// the directory, which a watcher hears as a change (one that would end
// the vouching of a restore's target, see save.Audit), so it runs once
// per directory, and again only when another directory stands at the
// path: a file system mounted there, the workspace replaced.
type nameProbes struct {
	mu    sync.Mutex
	known map[string]nameProbe
}

// nameProbe is one directory's probe: the directory as it was then, and
// what was found.
type nameProbe struct {
	dir   os.FileInfo
	rules osfs.NameRules
}

// remembered wraps probe so that it runs once per directory identity.
func (n *nameProbes) remembered(probe func(dir string) (osfs.NameRules, error)) func(dir string) (osfs.NameRules, error) {
	return func(dir string) (osfs.NameRules, error) {
		fi, err := os.Stat(dir)
		if err != nil {
			return probe(dir) // which says why the directory cannot be probed
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		if p, ok := n.known[dir]; ok && os.SameFile(p.dir, fi) {
			return p.rules, nil
		}
		r, err := probe(dir)
		if err != nil {
			return r, err
		}
		if n.known == nil {
			n.known = map[string]nameProbe{}
		}
		n.known[dir] = nameProbe{dir: fi, rules: r}
		return r, nil
	}
}
