package walker

import (
	"io/fs"
	"slices"
	"strings"

	"github.com/ckpt/ckpt/walker/ignore"
)

// maxPatternFile bounds the pattern files read (git caps .gitattributes at
// 100 MiB too); larger ones are ignored.
const maxPatternFile = 100 << 20

// fileType is the type of a directory entry as the platform reports it.
type fileType uint8

const (
	typeOther fileType = iota
	typeFile
	typeDir
	typeSymlink
	typeFIFO
	typeSocket
	typeDevice
)

// Access wanted by permChecker.check; the values are those of access(2).
const (
	accessRead = 4     // read a file
	accessList = 4 | 1 // list and enter a directory
)

// fileStat is the lstat data of one entry, in the platform's terms (see
// Entry for what each field holds where).
type fileStat struct {
	typ              fileType
	mode             uint32 // permission bits
	size             int64
	mtimeNs, ctimeNs int64
	ino, dev         uint64
	nlink            uint32 // 0 when unknown
	uid, gid         uint32 // owner, where permChecker uses it
}

// list reads directory n (whose handle is open), loads its pattern files
// and fills n.dir.Entries with its included entries, reporting skipped
// ones. A directory Options.Replay answers for is replayed instead.
func (w *walk[T]) list(n *node[T]) error {
	if w.cfg.replay != nil {
		if entries, changed, ok := w.cfg.replay(n.dir.Path); ok {
			w.replay(n, entries, changed)
			return nil
		}
	}
	names, stats, err := readDir(n.fd)
	if err != nil {
		return &fs.PathError{Op: "readdirent", Path: n.dir.Path, Err: err}
	}
	w.loadRules(n, func(name string) ([]byte, error) {
		if _, found := slices.BinarySearch(names, name); !found {
			return nil, fs.ErrNotExist
		}
		return readPatternFile(n.fd, name)
	})
	entries := make([]Entry, 0, len(names))
	for i, name := range names {
		if name == ignore.GitDir {
			continue
		}
		var st *fileStat
		if stats != nil {
			st = &stats[i]
		}
		if e, ok := w.entry(n, name, st); ok {
			entries = append(entries, e)
		}
	}
	n.dir.Entries = entries
	return nil
}

// replay fills n.dir.Entries with the entries Options.Replay gave for it,
// each of the changed names and each symlink looked up again; schedule
// does the same for the subdirectories it does not prune. An entry that is
// gone is left out and one replaced stays as what it is now, as in a
// listing a moment later.
func (w *walk[T]) replay(n *node[T], entries []Entry, changed []string) {
	w.loadRules(n, func(name string) ([]byte, error) { return readPatternFile(n.fd, name) })
	kept := entries[:0]
	for _, e := range entries {
		if _, found := slices.BinarySearch(changed, e.Name); found {
			continue
		}
		if e.Kind == KindSymlink {
			var ok bool
			if e, ok = w.entry(n, e.Name, nil); !ok {
				continue
			}
		}
		kept = append(kept, e)
	}
	for _, name := range changed {
		if name == ignore.GitDir {
			continue
		}
		if e, ok := w.entry(n, name, nil); ok {
			kept = append(kept, e)
		}
	}
	if len(changed) > 0 {
		slices.SortFunc(kept, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	}
	n.dir.Entries, n.dir.Replayed = kept, true
}

// loadRules sets n's ignore rules from its pattern files, which read
// returns (any error: no such file), and for the root the global ones.
func (w *walk[T]) loadRules(n *node[T], read func(name string) ([]byte, error)) {
	set := ignore.LoadDir(read)
	if n.parent == nil {
		for l := range set {
			set[l] = append(slices.Clip(w.cfg.global[l]), set[l]...)
		}
	}
	n.rules = n.rules.Child(n.dir.Path, set)
}

// entry decides whether name of n is included; st is its stat data from
// the listing, or nil to lstat it first.
func (w *walk[T]) entry(n *node[T], name string, listed *fileStat) (Entry, bool) {
	rel := join(n.dir.Path, name)
	var st fileStat
	if listed != nil {
		st = *listed
	} else {
		var err error
		if st, err = lstatAt(n.fd, name); err != nil {
			if !n.rules.Ignored(rel, false) || !n.rules.Ignored(rel, true) {
				w.report(rel, &fs.PathError{Op: "lstat", Path: rel, Err: err})
			}
			return Entry{}, false
		}
	}
	if n.rules.Ignored(rel, st.typ == typeDir) {
		if st.typ == typeFile && st.nlink > 1 && ignore.IsPatternFile(name) {
			n.dir.ExcludedRuleLinked = true
		}
		return Entry{}, false
	}
	e := Entry{
		Name: name, Mode: st.mode, Size: st.size,
		MtimeNs: st.mtimeNs, CtimeNs: st.ctimeNs, Ino: st.ino, Dev: st.dev, Nlink: st.nlink,
	}
	switch st.typ {
	case typeFile:
		if w.cfg.maxSize > 0 && st.size > w.cfg.maxSize {
			w.skip(Skipped{Path: rel, Reason: ReasonTooLarge})
			return Entry{}, false
		}
		if err := w.cfg.perm.check(n.fd, name, &st, accessRead); err != nil {
			w.unreadable(n, name, &fs.PathError{Op: "open", Path: rel, Err: err})
			return Entry{}, false
		}
		e.Kind = KindFile
	case typeSymlink:
		target, err := readlinkAt(n.fd, name, st.size)
		if err != nil {
			w.report(rel, &fs.PathError{Op: "readlink", Path: rel, Err: err})
			return Entry{}, false
		}
		e.Kind, e.Target, e.Size = KindSymlink, target, int64(len(target))
	case typeDir:
		if w.cfg.exclude[devIno{e.Dev, e.Ino}] {
			return Entry{}, false
		}
		if err := w.cfg.perm.check(n.fd, name, &st, accessList); err != nil {
			w.unreadable(n, name, &fs.PathError{Op: "open", Path: rel, Err: err})
			return Entry{}, false
		}
		e.Kind, e.Size = KindDir, 0
	default:
		w.skip(Skipped{Path: rel, Reason: specialReason(st.typ)})
		return Entry{}, false
	}
	return e, true
}

// unreadable reports entry name of n, which could not be read because of
// err, and notes it in n's Dir.Unreadable.
func (w *walk[T]) unreadable(n *node[T], name string, err error) {
	if w.report(join(n.dir.Path, name), err) {
		n.dir.Unreadable = append(n.dir.Unreadable, name)
	}
}

func specialReason(typ fileType) string {
	switch typ {
	case typeFIFO:
		return ReasonFIFO
	case typeSocket:
		return ReasonSocket
	case typeDevice:
		return ReasonDevice
	}
	return ReasonOther
}
