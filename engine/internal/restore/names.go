package restore

import (
	"fmt"
	"path"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/ckpt/ckpt/internal/osfs"
	"github.com/ckpt/ckpt/objects"
)

// ConflictNameClash: the target holds another entry the workspace's file
// system cannot tell apart from this one (names differing only in case on
// a case-insensitive file system, or only in Unicode normalization on a
// normalizing one). The restore writes the other entry and leaves this one
// out, rather than letting one overwrite the other.
const ConflictNameClash ConflictKind = "name-clash"

// nameKey is the name under which a file system with rules r finds name.
// Names are compared through it only: the restore writes names as stored.
func nameKey(r osfs.NameRules, name string) string {
	if r.Normalizes {
		name = norm.NFC.String(name)
	}
	if r.FoldCase {
		name = strings.ToLower(name)
	}
	return name
}

// clashes returns, for each entry of a target directory that the file
// system (matching names by rules r) cannot tell apart from another, the
// name of the entry restored instead: the one the current directory cur
// holds, else the first in byte order. It is nil when no two names clash.
func clashes(r osfs.NameRules, tgt, cur []objects.Entry) map[string]string {
	if r == (osfs.NameRules{}) || len(tgt) < 2 {
		return nil
	}
	held := make(map[string]bool, len(cur))
	for _, e := range cur {
		held[e.Name] = true
	}
	kept := make(map[string]string, len(tgt))
	var out map[string]string
	for _, e := range tgt {
		k := nameKey(r, e.Name)
		first, dup := kept[k]
		switch {
		case !dup:
			kept[k] = e.Name
			continue
		case held[e.Name] && !held[first]:
			kept[k] = e.Name
			e.Name = first
		}
		if out == nil {
			out = map[string]string{}
		}
		out[e.Name] = ""
	}
	for name := range out {
		out[name] = kept[nameKey(r, name)]
	}
	return out
}

// clashReason explains a ConflictNameClash for the entry at rel.
func clashReason(rel, kept string) string {
	return fmt.Sprintf("this file system cannot hold both %q and %q in one directory; %s was restored and this path left out",
		path.Base(rel), kept, path.Join(path.Dir(rel), kept))
}

// clashConflicts reports the plan's name clashes as conflicts.
func (x *Applier) clashConflicts(p *Plan) {
	for _, o := range p.clashes {
		x.conflictWhy(o.path, ConflictNameClash, clashReason(o.path, o.kept))
	}
}

// ConflictBadName: the workspace's file system cannot hold this name
// (Windows: a reserved device name, a trailing dot or space, a forbidden
// character). The restore leaves the path out.
const ConflictBadName ConflictKind = "bad-name"

// badName reports o as a ConflictBadName conflict when its name is one the
// file system cannot hold.
func (x *Applier) badName(o op) bool {
	if x.NameProblem == nil {
		return false
	}
	why := x.NameProblem(path.Base(o.path))
	if why == "" {
		return false
	}
	x.conflictWhy(o.path, ConflictBadName, why+"; this path was left out")
	return true
}
