package engine

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ckpt/ckpt/engine/internal/save"
	"github.com/ckpt/ckpt/internal/osfs"
	"github.com/ckpt/ckpt/objects"
)

// Root is one directory of a multi-root workspace (Options.Roots), such
// as a folder of a VS Code multi-root workspace.
//
// A multi-root checkpoint's tree has one top-level directory per root,
// named by the root, holding exactly what a single-root save of the
// root's directory would hold (its own ignore files, exclusion profile and
// nested repositories). So paths are "NAME/..." everywhere (Diff, History,
// Export, Ls, Cat), and a root's name is a path filter that selects that
// root: RestoreOptions.Paths, DiffOptions.Paths, ExportOptions.Paths and
// HistoryOptions.Paths take it as they take any path, and SaveOptions.Roots
// names the roots a save reads.
type Root struct {
	// Name is the root's top-level directory in checkpoints. Empty: the
	// base name of Dir, made unique in the workspace with a "-2", "-3", ...
	// suffix in the order the roots are given.
	Name string `json:"name"`
	// Dir is the root's directory; Open resolves it to its canonical
	// absolute path.
	Dir string `json:"dir"`
}

// canonicalRoots resolves roots as Open does: each directory canonical
// and allowed as a workspace, each name given or derived and unique, no
// directory inside another; sorted by name.
func canonicalRoots(roots []Root) ([]Root, error) {
	out := make([]Root, len(roots))
	taken := map[string]bool{}
	for i, r := range roots {
		dir, err := canonicalWorkspace(r.Dir)
		if err != nil {
			return nil, err
		}
		if r.Name != "" {
			if err := objects.ValidName(r.Name); err != nil {
				return nil, fmt.Errorf("%w: root %s: %w", ErrBadRequest, r.Dir, err)
			}
			if taken[r.Name] {
				return nil, fmt.Errorf("%w: two roots are named %q", ErrBadRequest, r.Name)
			}
			taken[r.Name] = true
		}
		out[i] = Root{Name: r.Name, Dir: dir}
	}
	for i := range out {
		if out[i].Name == "" {
			out[i].Name = uniqueName(filepath.Base(out[i].Dir), taken)
			taken[out[i].Name] = true
		}
		for _, o := range out[:i] {
			if within(o.Dir, out[i].Dir) || within(out[i].Dir, o.Dir) {
				return nil, fmt.Errorf("%w: roots %s and %s overlap; give directories neither of which holds the other", ErrBadRequest, o.Dir, out[i].Dir)
			}
		}
	}
	slices.SortFunc(out, func(a, b Root) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// uniqueName is base, or base with the first "-N" suffix not taken.
func uniqueName(base string, taken map[string]bool) string {
	name := base
	for n := 2; taken[name]; n++ {
		name = fmt.Sprintf("%s-%d", base, n)
	}
	return name
}

// within reports whether path is dir or below it (both canonical).
func within(dir, path string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// rootsIdentity is the workspace a multi-root store records: its roots,
// sorted by name, as JSON (which no single workspace's absolute path
// starts like). Opening the store with another set of roots is a
// *WorkspaceMismatchError.
func rootsIdentity(roots []Root) string {
	b, _ := json.Marshal(roots) // strings only: cannot fail
	return string(b)
}

// DefaultRootsStoreDir is DefaultStoreDir of a multi-root workspace:
// its <id> is derived from the roots' names and canonical directories.
func DefaultRootsStoreDir(roots []Root) (string, error) {
	ws, err := RootsWorkspace(roots)
	if err != nil {
		return "", err
	}
	return defaultStoreDir(ws)
}

// RootsWorkspace returns the identity an Engine opened with these roots
// has (its Workspace), without opening anything: a server compares it
// with its own to refuse a client of another set of roots.
func RootsWorkspace(roots []Root) (string, error) {
	canon, err := canonicalRoots(roots)
	if err != nil {
		return "", err
	}
	return rootsIdentity(canon), nil
}

// Roots returns the roots of a multi-root Engine, sorted by name, with
// canonical directories; nil for a single-root one.
func (e *Engine) Roots() []Root { return slices.Clone(e.places.roots) }

// places maps workspace-relative paths to the directories holding them.
type places struct {
	workspace string // the single root; a multi-root workspace's identity
	roots     []Root // nil for a single root
}

// locate returns the directory rel lies in and rel inside it: the
// workspace and rel, or the root rel's first element names and the rest
// ("." for the root itself). ok is false for a path outside every root.
func (p places) locate(rel string) (dir, in string, ok bool) {
	if p.roots == nil {
		return p.workspace, rel, true
	}
	name, rest, _ := strings.Cut(rel, "/")
	for _, r := range p.roots {
		if r.Name == name {
			if rest == "" {
				rest = "."
			}
			return r.Dir, rest, true
		}
	}
	return "", "", false
}

// abs is the absolute path of rel ("" outside every root).
func (p places) abs(rel string) string {
	dir, in, ok := p.locate(rel)
	if !ok {
		return ""
	}
	return filepath.Join(dir, filepath.FromSlash(in))
}

// dirs is every directory of the workspace.
func (p places) dirs() []string {
	if p.roots == nil {
		return []string{p.workspace}
	}
	out := make([]string, len(p.roots))
	for i, r := range p.roots {
		out[i] = r.Dir
	}
	return out
}

// saveRoots is roots in the save package's terms (nil for a single root).
func (p places) saveRoots() []save.Root {
	if p.roots == nil {
		return nil
	}
	out := make([]save.Root, len(p.roots))
	for i, r := range p.roots {
		out[i] = save.Root(r)
	}
	return out
}

// checkRootFilter refuses root names that are not this workspace's roots,
// and any root filter on a single-root workspace, with ErrBadRequest.
func (p places) checkRootFilter(names []string) error {
	for _, n := range names {
		if !slices.ContainsFunc(p.roots, func(r Root) bool { return r.Name == n }) {
			return fmt.Errorf("%w: %q is not a root of this workspace (%s)", ErrBadRequest, n, p.rootNames())
		}
	}
	return nil
}

func (p places) rootNames() string {
	if p.roots == nil {
		return "it has a single root"
	}
	names := make([]string, len(p.roots))
	for i, r := range p.roots {
		names[i] = r.Name
	}
	return "roots: " + strings.Join(names, ", ")
}

// nameRules probes how the file systems of the workspace's directories
// match names; for several roots, the strictest: names one of them would
// confuse are treated as confusable everywhere.
func (p places) nameRules(probe func(dir string) (osfs.NameRules, error)) (osfs.NameRules, error) {
	var all osfs.NameRules
	for _, dir := range p.dirs() {
		r, err := probe(dir)
		if err != nil {
			return r, fmt.Errorf("workspace %s: %w", dir, err)
		}
		all.FoldCase = all.FoldCase || r.FoldCase
		all.Normalizes = all.Normalizes || r.Normalizes
	}
	return all, nil
}
