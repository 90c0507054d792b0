package save

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/internal/osfs"
	"github.com/ckpt/ckpt/internal/watch"
	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

// racyMargin is how far before the stat cache's write time a file's mtime
// must lie for its cached hash to be trusted. Kernel timestamps come from a
// coarse clock (one tick, up to 10 ms), so a file rewritten with the same
// size just after it was hashed can keep the mtime the cache recorded; such
// entries are re-hashed, as git does for racily clean index entries.
const racyMargin = int64(50 * time.Millisecond)

// racy reports whether a stat-cache record of a file whose modification
// time is mtimeNs, written at writtenNs, cannot tell the read it records
// from a rewrite of the same size: the stamp lies within racyMargin, or
// the file system's own resolution, before the writing. A file system
// that keeps whole seconds (ext4 with 128-byte inodes, HFS+, most network
// mounts) or even seconds (FAT) shows it in the stamp, which then has no
// fraction: such a stamp is taken to be that coarse.
func racy(mtimeNs, writtenNs int64) bool {
	margin := racyMargin
	switch {
	case mtimeNs%int64(2*time.Second) == 0:
		margin = int64(2 * time.Second)
	case mtimeNs%int64(time.Second) == 0:
		margin = int64(time.Second)
	}
	return mtimeNs+margin > writtenNs
}

// maxReadAttempts bounds how often a file that changes while it is read is read again.
const maxReadAttempts = 3

// Snapshot is the workspace as one scan found it.
type Snapshot struct {
	Root objects.ID
	Pending
	// Skipped are the paths the scan left out, sorted by path. A scan
	// that replayed or pruned directories (see Store.Tracker) reports
	// there what the last committed scan reported, as a cold walk would.
	Skipped []walker.Skipped
	// Files counts the files and symlinks seen; a Partial scan does not
	// see those below the directories it pruned.
	Files  atomic.Uint64
	Hashed atomic.Uint64 // bytes read and hashed
	Opened atomic.Uint64 // workspace files opened for reading
	// Replayed counts the directories whose listing came from the stat
	// cache (see scanner.replay), with the entries the watcher named
	// looked up again.
	Replayed atomic.Uint64

	plan    *plan // what the Tracker let this scan trust; nil without one
	partial atomic.Bool
	// vouched: the Tracker vouched for Root (vouchedSnapshot), which no
	// scan read; the stat cache's records may be older than Root.
	vouched bool
	// linked records, for each directory this scan listed, the files (and
	// rule files) with more than one hard link it holds (see Tracker); nil
	// without a Tracker. vanished lists the directories it found gone.
	linked   map[string]dirLinks
	vanished []string
}

// Pending is what a scan recorded for the index that a storing scan has
// not flushed to it yet.
type Pending struct {
	// Trees holds the trees computed by the scan (directories whose stat
	// cache did not let the scan reuse the stored tree id).
	Trees map[objects.ID]objects.Tree
	// Bases holds, for a tree of Trees whose directory had a stored tree
	// before, that tree's id: the tree is stored as a delta of it.
	Bases map[objects.ID]objects.ID
	// Caches holds the stat-cache records that changed.
	Caches map[string]index.DirCache
	// GoneDirs are directories the stat cache knows that no longer exist;
	// their caches (and their subtrees') are deleted with the save.
	GoneDirs []string
}

func newPending() Pending {
	return Pending{Trees: map[objects.ID]objects.Tree{}, Bases: map[objects.ID]objects.ID{}, Caches: map[string]index.DirCache{}}
}

// Partial reports whether the scan took some subtrees from the stat cache
// without listing them (see Store.Tracker): Files then counts only the
// files it listed, and a checkpoint's file count must come from its
// parent's and the changes.
func (s *Snapshot) Partial() bool { return s.partial.Load() }

// scanner builds a snapshot. With put set, new content is stored in that
// batch; without it the scan only hashes (workspace diffs, dry runs).
type scanner struct {
	st        *Store
	put       *objects.Batch
	writtenNs int64
	snap      *Snapshot
	progress  func(files, hashed uint64)
	// cached is the stat cache: for a full walk all of it, read with one
	// iterator before the walk (one index lookup per directory costs several
	// times more); for a scan the watcher narrows, the index itself, since
	// the scan looks up only the directories it lists or prunes.
	cached dirCaches
	carry  *modeCarry // set when the file system has no permission bits
	bases  *baseTrees // the base checkpoint's directories

	plan *plan // nil without a Tracker
	// unlisted holds the directories the scan replayed or pruned; nil
	// without a Tracker.
	unlisted *unlisted
	// records holds the stat-cache records of the directories the scan
	// lists or replays, read before the walker asks about their
	// subdirectories, until their own visit (guarded by mu).
	records map[string]record
	// differ, set by Reverify, collects the directories whose tree
	// differs from the one their stat cache records (guarded by mu).
	differ *[]string

	mu sync.Mutex // guards snap.Pending, snap.Skipped, unflushed
	// unflushed counts the tree entries recorded since the last flush.
	unflushed int
	flushMu   sync.Mutex // one flush at a time
}

// defaultFlushEntries is how many tree entries a storing scan accumulates
// before it writes them (with their blobs' locators and stat-cache records)
// to the index, so a save's memory is bounded by this batch, not by the
// workspace. Tests lower it (Store.FlushEntries).
const defaultFlushEntries = 32 << 10

// Scan walks the workspace and returns its snapshot, storing new content in
// put (nil: hash only) and calling progress with the counts so far after
// each directory. Only files whose stat differs from the stat cache (or is
// racy) are read. With CarryModes, modes come from the tree base (the
// checkpoint the workspace is measured against; zero: none). In a
// multi-root workspace (Roots), only names the roots to walk (empty: all);
// the others keep their subtree from base (see scanRoots). When the
// Tracker vouches that the workspace holds base (a restore wrote it and
// the watcher heard nothing else since, see Audit), nothing is walked.
func (st *Store) Scan(ctx context.Context, put *objects.Batch, base objects.ID, only []string, progress func(files, hashed uint64)) (*Snapshot, error) {
	if st.Tracker != nil && len(st.Roots) == 0 {
		if root, ok := st.Tracker.Vouched(); ok && root == base {
			snap := st.vouchedSnapshot(root)
			if st.AfterScan != nil {
				st.AfterScan(snap)
			}
			return snap, nil
		}
	}
	return st.walk(ctx, put, base, only, progress)
}

// walk is Scan without a vouched root: it lists every directory the
// Tracker's plan does not let it trust.
func (st *Store) walk(ctx context.Context, put *objects.Batch, base objects.ID, only []string, progress func(files, hashed uint64)) (*Snapshot, error) {
	s := st.newScanner(put, base, progress)
	if len(st.Roots) > 0 {
		snap, err := st.scanRoots(ctx, s, base, only)
		if err == nil && st.AfterScan != nil {
			st.AfterScan(snap)
		}
		return snap, err
	}
	opts := st.Walk
	if st.Tracker != nil {
		s.plan = st.Tracker.begin()
		s.snap.plan = s.plan
		s.snap.linked = map[string]dirLinks{}
		opts.Prune = s.prune
		s.records = map[string]record{}
		opts.Replay = s.replay
		s.unlisted = newUnlisted()
	}
	if s.plan != nil && !s.plan.trustsNothing() {
		s.cached = pointCaches{st.DB}
	} else {
		set, err := st.DB.LoadDirCaches()
		if err != nil {
			return nil, err
		}
		s.cached = set
	}
	root, skipped, err := walker.Walk(ctx, st.Workspace, opts, s.visit)
	if err != nil {
		return nil, err
	}
	if s.plan != nil && !s.plan.trustsNothing() && st.Tracker.newlyLinked(s.snap.linked) {
		// A file this scan looked up has another hard link, which its
		// directory was not known to hold: the other name may lie in a
		// directory the scan trusted, whose file then changed with no
		// event there (ln, cp -al). One walk of everything finds every
		// such name, and their directories are listed at every scan after.
		st.Tracker.trustNothingNext()
		return st.walk(ctx, put, base, only, progress)
	}
	s.snap.Root = root
	s.snap.Skipped = append(skipped, s.snap.Skipped...)
	if s.unlisted != nil {
		s.snap.Skipped = s.unlisted.withCarried(s.snap.Skipped, st.Tracker.lastSkipped())
	}
	sortSkipped(s.snap.Skipped)
	if st.AfterScan != nil {
		st.AfterScan(s.snap)
	}
	return s.snap, nil
}

// newScanner prepares a scan (see Scan).
func (st *Store) newScanner(put *objects.Batch, base objects.ID, progress func(files, hashed uint64)) *scanner {
	if progress == nil {
		progress = func(uint64, uint64) {}
	}
	s := &scanner{
		st:        st,
		put:       put,
		writtenNs: time.Now().UnixNano(),
		progress:  progress,
		snap:      &Snapshot{Pending: newPending()},
	}
	s.bases = newBaseTrees(st.DB, base)
	if st.CarryModes {
		s.carry = &modeCarry{trees: s.bases}
	}
	return s
}

// dirCaches is where a scan finds a directory's stat-cache record.
type dirCaches interface {
	Get(dir string) (index.DirCache, bool, error)
	// Has reports whether dir has a record, without decoding it.
	Has(dir string) (bool, error)
}

// pointCaches looks each directory up in the index.
type pointCaches struct{ db *index.DB }

func (p pointCaches) Get(dir string) (index.DirCache, bool, error) { return p.db.DirCache(dir) }
func (p pointCaches) Has(dir string) (bool, error)                 { return p.db.HasDirCache(dir) }

// visit turns one directory into a tree id. When every entry matches the
// stat cache the stored tree id is reused without encoding anything.
func (s *scanner) visit(ctx context.Context, d *walker.Dir, sub map[string]objects.ID) (objects.ID, error) {
	if s.unlisted != nil {
		s.unlisted.note(d)
	}
	if d.Pruned { // prune checked that the cache holds it
		s.snap.partial.Store(true)
		if id, ok := s.recordedSub(d.Path); ok {
			return id, nil
		}
		dc, _, err := s.cached.Get(d.Path)
		return dc.Tree, err
	}
	dc, cached, err := s.cachedDir(d)
	if err != nil {
		return objects.ID{}, err
	}
	results, err := s.entryIDs(ctx, d, &dc, sub)
	if err != nil {
		return objects.ID{}, err
	}
	based, err := s.carry.entries(d.Path)
	if err != nil {
		return objects.ID{}, err
	}
	s.noteLinks(d)
	reuse := cached && len(dc.Entries) == len(d.Entries)
	tree := objects.Tree{Entries: make([]objects.Entry, 0, len(d.Entries))}
	fresh := index.DirCache{WrittenNs: s.writtenNs, Entries: make([]index.CachedFile, 0, len(d.Entries))}
	var unread []string
	for i := range d.Entries {
		ent, r := &d.Entries[i], &results[i]
		if r.skipped { // vanished or unreadable: reported, left out
			reuse = false
			if r.kept {
				unread = append(unread, ent.Name)
			}
			continue
		}
		reuse = reuse && r.hit
		if ent.Kind != walker.KindDir {
			s.snap.Files.Add(1)
		}
		tree.Entries = append(tree.Entries, objects.Entry{Name: ent.Name, Kind: objects.Kind(ent.Kind), Mode: s.carry.mode(based, ent, r.id), Size: r.size, ID: r.id})
		fresh.Entries = append(fresh.Entries, cacheRecord(ent, r))
	}
	kept, err := s.keptEntries(d.Path, &dc, append(unread, d.Unreadable...))
	if err != nil {
		return objects.ID{}, err
	}
	if len(kept) > 0 {
		reuse = false
		for _, c := range kept {
			tree.Entries = append(tree.Entries, objects.Entry{Name: c.Name, Kind: objects.Kind(cachedKind(c.Mode)), Mode: c.Mode & permBits, Size: c.Size, ID: c.ID})
			fresh.Entries = append(fresh.Entries, keptRecord(c))
			if cachedKind(c.Mode) != walker.KindDir {
				s.snap.Files.Add(1)
			}
		}
		slices.SortFunc(tree.Entries, func(a, b objects.Entry) int { return strings.Compare(a.Name, b.Name) })
		slices.SortFunc(fresh.Entries, func(a, b index.CachedFile) int { return strings.Compare(a.Name, b.Name) })
	}
	s.progress(s.snap.Files.Load(), s.snap.Hashed.Load())
	if reuse, err = s.carry.sameModes(reuse, dc.Tree, tree); err != nil {
		return objects.ID{}, err
	}
	if reuse {
		return dc.Tree, nil
	}
	tid, err := index.TreeID(tree)
	if err != nil {
		return objects.ID{}, fmt.Errorf("directory %q: %w", d.Path, err)
	}
	fresh.Tree = tid
	gone := vanishedDirs(d.Path, dc.Entries, tree.Entries)
	s.mu.Lock()
	if s.differ != nil && cached && tid != dc.Tree && ownChange(dc.Entries, fresh.Entries) {
		*s.differ = append(*s.differ, d.Path)
	}
	s.snap.Trees[tid] = tree
	if cached && !dc.Tree.IsZero() {
		s.snap.Bases[tid] = dc.Tree
	}
	s.snap.Caches[d.Path] = fresh
	s.snap.GoneDirs = append(s.snap.GoneDirs, gone...)
	if s.snap.linked != nil {
		s.snap.vanished = append(s.snap.vanished, gone...)
	}
	s.unflushed += len(tree.Entries) + 1
	full := s.put != nil && s.unflushed >= s.st.flushSize()
	s.mu.Unlock()
	if full {
		if err := s.flush(); err != nil {
			return objects.ID{}, err
		}
	}
	return tid, nil
}

// record is a directory's stat-cache record as a scan read it; found is
// false when the directory has none.
type record struct {
	dc    index.DirCache
	found bool
}

// cachedDir is the stat-cache record of d: the one read before it was
// listed or replayed, or the index's.
func (s *scanner) cachedDir(d *walker.Dir) (index.DirCache, bool, error) {
	s.mu.Lock()
	r, ok := s.records[d.Path]
	delete(s.records, d.Path)
	s.mu.Unlock()
	if ok {
		return r.dc, r.found, nil
	}
	return s.cached.Get(d.Path)
}

// replay is asked for every directory about to be listed. It reads the
// directory's stat-cache record, kept for its subdirectories (see
// recordedSub) and its visit, and gives the walker the listing from that
// record when the watcher vouches for dir's own entries (see
// plan.passage): the directories a scan lists only to reach a change
// below them are not listed again, only their subdirectories on that way
// are lstatted.
func (s *scanner) replay(dir string) ([]walker.Entry, []string, bool) {
	dc, found, err := s.cached.Get(dir)
	if err != nil { // the visit reads it again and fails
		return nil, nil, false
	}
	s.mu.Lock()
	s.records[dir] = record{dc, found}
	s.mu.Unlock()
	if !found {
		return nil, nil, false
	}
	changed, ok := s.plan.passage(dir)
	if !ok {
		return nil, nil, false
	}
	s.unlisted.lookedUp(dir, changed)
	entries := make([]walker.Entry, len(dc.Entries))
	for i, c := range dc.Entries {
		entries[i] = walker.Entry{Name: c.Name, Kind: cachedKind(c.Mode), Mode: c.Mode & permBits,
			Size: c.Size, MtimeNs: c.MtimeNs, CtimeNs: c.CtimeNs, Ino: c.Inode}
	}
	s.snap.Replayed.Add(1)
	return entries, changed, true
}

// recordedSub is the tree id that the stat-cache record of dir's parent
// holds for dir, when the scan read that record before listing or
// replaying the parent and it lists dir as a directory. A directory's
// record and the entry for it in its parent's are written by the same
// scan, and a scan that changes one (it listed dir: dir was not quiet)
// leaves dir pending with the Tracker until it commits both; so for a
// quiet dir they agree, and a prune or a pruned visit below a directory
// the scan reads needs no index lookup.
func (s *scanner) recordedSub(dir string) (objects.ID, bool) {
	if s.records == nil || dir == "" {
		return objects.ID{}, false
	}
	s.mu.Lock()
	r, ok := s.records[parentDir(dir)]
	s.mu.Unlock()
	if !ok {
		return objects.ID{}, false
	}
	i, found := slices.BinarySearchFunc(r.dc.Entries, path.Base(dir), func(c index.CachedFile, name string) int {
		return strings.Compare(c.Name, name)
	})
	if !found || cachedKind(r.dc.Entries[i].Mode) != walker.KindDir || r.dc.Entries[i].ID.IsZero() {
		return objects.ID{}, false
	}
	return r.dc.Entries[i].ID, true
}

// noteLinks records the files of directory d with another hard link,
// whose content can change with no event in d, and whether one of them is
// an ignore-rule file (captured, or excluded by the rules, its own among
// them), whose change can change what the whole subtree captures. A
// replayed directory keeps the links it had (it had none: one with links
// is listed), unless an entry looked up again shows one.
func (s *scanner) noteLinks(d *walker.Dir) {
	if s.snap.linked == nil {
		return
	}
	var linked dirLinks
	if d.ExcludedRuleLinked {
		linked.kind = ruleLinks
	}
	for i := range d.Entries {
		e := &d.Entries[i]
		if e.Kind != walker.KindFile || e.Nlink <= 1 {
			continue
		}
		linked.files = append(linked.files, fileID{dev: e.Dev, ino: e.Ino})
		if slices.Contains(watch.DefaultRuleNames, e.Name) {
			linked.kind = ruleLinks
		} else {
			linked.kind = max(linked.kind, fileLinks)
		}
	}
	if d.Replayed && linked.kind == noLinks {
		return
	}
	slices.SortFunc(linked.files, compareFiles)
	s.mu.Lock()
	s.snap.linked[d.Path] = linked
	s.mu.Unlock()
}

// prune reports whether the watcher vouches for dir's whole subtree and
// the stat cache holds its tree id; any doubt walks it. The walker asks
// before it opens dir, so a directory it will list is watched first: a
// change either precedes the listing or raises an event, and the next
// scan need not re-read what this one read. (The root, never asked, is
// watched from the watcher's start.)
func (s *scanner) prune(dir string) bool {
	if s.plan.quiet(dir) {
		if _, ok := s.recordedSub(dir); ok {
			return true
		}
		if cached, err := s.cached.Has(dir); err == nil && cached {
			return true
		}
	}
	s.plan.watch(dir)
	return false
}

// flush writes the trees and stat-cache records recorded so far, and the
// locators of every blob stored so far, in one index batch. They stay
// unreferenced (and invisible) until the save's checkpoint commits; a crash
// leaves them for gc. Every record flushed was made by a finished visit, so
// the blobs and subtrees it names are stored and flushed with it or before.
func (s *scanner) flush() error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	if s.unflushed < s.st.flushSize() { // another visit flushed meanwhile
		s.mu.Unlock()
		return nil
	}
	p := s.snap.Pending
	s.snap.Pending = newPending()
	s.unflushed = 0
	s.mu.Unlock()
	if err := s.st.writeIndex(s.put, &p, nil); err != nil {
		return err
	}
	if s.st.AfterFlush != nil {
		s.st.AfterFlush()
	}
	return nil
}

// vanishedDirs lists the subdirectories the cache recorded in dir that are
// no longer directories there. Both lists are sorted by name.
func vanishedDirs(dir string, cached []index.CachedFile, now []objects.Entry) []string {
	var gone []string
	j := 0
	for _, c := range cached {
		if c.Mode>>12 != uint32(walker.KindDir) {
			continue
		}
		for j < len(now) && now[j].Name < c.Name {
			j++
		}
		if j == len(now) || now[j].Name != c.Name || now[j].Kind != objects.KindDir {
			gone = append(gone, path.Join(dir, c.Name))
		}
	}
	return gone
}

// ownChange reports whether a directory's entries, as cached and as
// found now, differ in more than the tree ids of subdirectories: a name,
// a kind or permission, or a file's content.
func ownChange(cached, now []index.CachedFile) bool {
	if len(cached) != len(now) {
		return true
	}
	for i := range now {
		c, n := &cached[i], &now[i]
		if c.Name != n.Name || c.Mode != n.Mode || (c.ID != n.ID && n.Mode>>12 != uint32(walker.KindDir)) {
			return true
		}
	}
	return false
}

// cacheMode packs an entry's kind and permission bits into the stat cache's mode field.
func cacheMode(k walker.Kind, perm uint32) uint32 { return uint32(k)<<12 | perm }

// permBits are the bits of a stat-cache mode that hold the permissions.
const permBits = 1<<12 - 1

// cachedKind is the kind of entry a stat-cache mode (cacheMode) records.
func cachedKind(mode uint32) walker.Kind { return walker.Kind(mode >> 12) }

// cacheRecord is the stat-cache record for ent with r's content. It keeps a
// stat taken before that content was read, so that a file that changed
// during or after the read no longer matches it (the next save reads it
// again, a restore finds it changed since its backup): the listing's, or,
// for a file rewritten between its listing and its read
// (rewrittenBeforeRead), the stamp the read's open took, which describes
// the content read where the listing's would pair an older file with it.
// A field the open's look does not give (0: Windows' change time and file
// ID) is then the listing's: the record matches no later listing, and the
// next save reads the file again.
func cacheRecord(ent *walker.Entry, r *entryResult) index.CachedFile {
	c := index.CachedFile{
		Name: ent.Name, Size: r.size, MtimeNs: ent.MtimeNs, CtimeNs: ent.CtimeNs,
		Inode: ent.Ino, Mode: cacheMode(ent.Kind, ent.Mode), ID: r.id,
	}
	if o := r.opened; rewrittenBeforeRead(ent, o) {
		c.MtimeNs = o.ModTime
		if o.ChangeTime != 0 {
			c.CtimeNs = o.ChangeTime
		}
		if o.Inode != 0 {
			c.Inode = o.Inode
		}
	}
	return c
}

// rewrittenBeforeRead reports whether the file listed as ent was rewritten
// before the read whose open took stamp o (zero: no read that found the
// file holding still): another size or modification time, with the same
// permission bits where o gives them. Its record then takes o's stat. A
// file whose permissions changed too keeps the listing's stat, as the
// checkpoint keeps the listing's mode: a restore finds it changed and
// leaves it alone. A file not rewritten keeps the listing's stat too
// (lstat's, which later listings and a restore's lookups compare with),
// even where the open's look differs in a field alone (an inode, on some
// layered file systems).
func rewrittenBeforeRead(ent *walker.Entry, o osfs.Stamp) bool {
	if o == (osfs.Stamp{}) || o.Size == ent.Size && o.ModTime == ent.MtimeNs {
		return false
	}
	return o.Perm == 0 || o.Perm == ent.Mode
}

// keptEntries returns the records to keep for the entries names of
// directory dir (stat-cache record dc) that could not be read now: a file
// the scan may not read, a directory it may not list keeps, in the
// checkpoint, the version the last scan to read it recorded, as git keeps
// an index entry it cannot refresh (so an unreadable path is not saved as
// deleted); with no such record, the base checkpoint's. A name neither
// holds (never read) stays out, and so do symlinks. With StatCacheReadOnly
// the record is not this Store's (it was taken under other walk rules:
// a directory's tree would hold what these rules exclude), so the base
// checkpoint's version is kept.
func (s *scanner) keptEntries(dir string, dc *index.DirCache, names []string) ([]index.CachedFile, error) {
	var kept []index.CachedFile
	for _, name := range names {
		i, found := 0, false
		if !s.st.StatCacheReadOnly {
			i, found = slices.BinarySearchFunc(dc.Entries, name, func(c index.CachedFile, name string) int {
				return strings.Compare(c.Name, name)
			})
		}
		c := index.CachedFile{}
		if found {
			c = dc.Entries[i]
		} else {
			based, err := s.bases.entries(dir)
			if err != nil {
				return nil, err
			}
			e, ok := based[name]
			if !ok {
				continue
			}
			c = index.CachedFile{Name: name, Size: e.Size, Mode: cacheMode(walker.Kind(e.Kind), e.Mode&permBits), ID: e.ID}
		}
		if k := cachedKind(c.Mode); k == walker.KindFile || k == walker.KindDir {
			kept = append(kept, c)
		}
	}
	return kept, nil
}

// keptRecord is the stat-cache record of an entry kept unread: its version
// and kind as before, and no stat (zero times and inode), which no entry
// the walker finds matches, so the next scan reads it again. A replayed
// directory lists it, so the next scan tries it, and keeps it again, as a
// listing does.
func keptRecord(c index.CachedFile) index.CachedFile {
	c.MtimeNs, c.CtimeNs, c.Inode = 0, 0, 0
	return c
}

// statMatches reports whether a cached record still describes ent and can be
// trusted (not racy with respect to the moment the cache was written).
func statMatches(prev *index.CachedFile, ent *walker.Entry, cacheWrittenNs int64) bool {
	return prev != nil &&
		prev.Mode == cacheMode(ent.Kind, ent.Mode) &&
		prev.Size == ent.Size &&
		prev.MtimeNs == ent.MtimeNs &&
		prev.CtimeNs == ent.CtimeNs &&
		prev.Inode == ent.Ino &&
		!racy(prev.MtimeNs, cacheWrittenNs)
}

// entryResult is what the scan learned of one directory entry.
type entryResult struct {
	id      objects.ID
	size    int64
	hit     bool // the stat cache supplied it unchanged
	skipped bool // left out (reported)
	// kept: a file left out because it could not be read, whose version
	// the stat cache recorded the directory keeps (see keptEntries)
	kept bool
	read bool // a regular file whose content must be read
	// prev is, for a file to read, its previous version, which the store
	// may keep the new content as a delta against: the content the stat
	// cache recorded for it, else the base checkpoint's (zero: neither).
	prev objects.ID
	// opened is, for a file read while it held still, the stamp the
	// read's open took (zero otherwise), which its record holds if the
	// file was rewritten since its listing (cacheRecord).
	opened osfs.Stamp
}

// parallelReadMin is the number of files to read in one directory from
// which they are read by several goroutines: a wide directory would
// otherwise keep one core busy while the other has nothing left to walk.
const parallelReadMin = 16

// entryIDs resolves every entry of d: subdirectories from sub, symlinks from
// their target, files from the stat cache when it can be trusted, else by
// reading them (in parallel when there are many).
func (s *scanner) entryIDs(ctx context.Context, d *walker.Dir, dc *index.DirCache, sub map[string]objects.ID) ([]entryResult, error) {
	results := make([]entryResult, len(d.Entries))
	var reads []int
	j := 0
	for i := range d.Entries {
		ent := &d.Entries[i]
		for j < len(dc.Entries) && dc.Entries[j].Name < ent.Name {
			j++
		}
		var prev *index.CachedFile
		if j < len(dc.Entries) && dc.Entries[j].Name == ent.Name {
			prev = &dc.Entries[j]
		}
		r, err := s.entryID(ent, prev, sub, dc.WrittenNs)
		if err != nil {
			return nil, err
		}
		results[i] = r
		if r.read {
			reads = append(reads, i)
		}
	}
	if err := s.basePrevs(d, results, reads); err != nil {
		return nil, err
	}
	read := func(ctx context.Context, i int) error {
		r := &results[i]
		var err error
		r.id, r.size, r.opened, err = s.readFile(ctx, path.Join(d.Path, d.Entries[i].Name), r.prev)
		if errors.Is(err, errSkipFile) {
			r.skipped, r.kept, err = true, errors.Is(err, errKeepFile), nil
		}
		return err
	}
	if len(reads) < parallelReadMin {
		for _, i := range reads {
			if err := read(ctx, i); err != nil {
				return nil, err
			}
		}
		return results, nil
	}
	// The group's context stops the sibling reads after the first failure.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, i := range reads {
		g.Go(func() error { return read(gctx, i) })
	}
	return results, g.Wait()
}

// basePrevs gives each file of d to read that the stat cache does not
// know (after a restore, which leaves no stat cache) the base checkpoint's
// content of the same path as its previous version.
func (s *scanner) basePrevs(d *walker.Dir, results []entryResult, reads []int) error {
	if s.put == nil {
		return nil
	}
	var based map[string]objects.Entry
	loaded := false
	for _, i := range reads {
		if !results[i].prev.IsZero() {
			continue
		}
		if !loaded {
			m, err := s.bases.entries(d.Path)
			if err != nil {
				return err
			}
			based, loaded = m, true
		}
		if e, ok := based[d.Entries[i].Name]; ok && e.Kind == objects.KindFile {
			results[i].prev = e.ID
		}
	}
	return nil
}

// entryID resolves one entry without reading it; a file the stat cache
// cannot vouch for comes back with read set.
func (s *scanner) entryID(ent *walker.Entry, prev *index.CachedFile, sub map[string]objects.ID, cacheWrittenNs int64) (entryResult, error) {
	switch ent.Kind {
	case walker.KindDir:
		id := sub[ent.Name]
		return entryResult{id: id, hit: prev != nil && prev.Mode == cacheMode(ent.Kind, ent.Mode) && prev.ID == id}, nil
	case walker.KindSymlink:
		target := []byte(ent.Target)
		r := entryResult{id: objects.Sum(target), size: int64(len(target))}
		r.hit = prev != nil && prev.Mode == cacheMode(ent.Kind, ent.Mode) && prev.ID == r.id
		if !r.hit && s.put != nil {
			if _, err := s.put.PutBytes(target); err != nil {
				return r, err
			}
		}
		return r, nil
	}
	if statMatches(prev, ent, cacheWrittenNs) {
		return entryResult{id: prev.ID, size: prev.Size, hit: true}, nil
	}
	r := entryResult{read: true}
	if prev != nil && cachedKind(prev.Mode) == walker.KindFile {
		r.prev = prev.ID
	}
	return r, nil
}

// errSkipFile marks a file that readFile reported as skipped; errKeepFile
// (which matches it) one that could not be read, whose last version the
// directory keeps.
var (
	errSkipFile = errors.New("file skipped")
	errKeepFile = fmt.Errorf("%w: its last version kept", errSkipFile)
)

// readFile hashes (and, when storing, stores) one regular file. The file is
// opened without following symlinks and without blocking (it may have become
// a FIFO since the walk); if its stat changes while it is read it is read
// again, up to maxReadAttempts times. prev is its previous version (see
// entryResult.prev). It returns the stamp the open of the read took, when
// the file held still while it was read (zero after a last attempt that
// found it changing).
func (s *scanner) readFile(ctx context.Context, rel string, prev objects.ID) (objects.ID, int64, osfs.Stamp, error) {
	abs := s.st.abs(rel)
	if s.st.BeforeRead != nil {
		s.st.BeforeRead(rel)
	}
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return objects.ID{}, 0, osfs.Stamp{}, err
		}
		id, size, opened, stable, err := s.readOnce(abs, prev)
		var unreadable *unreadableError
		if errors.As(err, &unreadable) {
			s.skip(rel, "unreadable", unreadable.err)
			if keepsLastVersion(unreadable.err) {
				return id, 0, osfs.Stamp{}, errKeepFile
			}
			return id, 0, osfs.Stamp{}, errSkipFile
		}
		if err != nil {
			return id, 0, osfs.Stamp{}, err
		}
		if stable {
			s.snap.Hashed.Add(uint64(size))
			return id, size, opened, nil
		}
		if attempt == maxReadAttempts {
			// A file still changing after the last attempt is captured as read;
			// its cache record keeps the listing's stat, which the file no
			// longer has, so the next save reads it again.
			s.snap.Hashed.Add(uint64(size))
			return id, size, osfs.Stamp{}, nil
		}
	}
}

// readOnce reads abs once, a new version of blob prev, and reports whether
// the stamps its open and a look after the read took are the same (and so
// the content read is what the file held at the open), with the open's.
func (s *scanner) readOnce(abs string, prev objects.ID) (id objects.ID, size int64, opened osfs.Stamp, stable bool, err error) {
	r, err := osfs.OpenRegular(abs)
	if err != nil {
		return id, 0, osfs.Stamp{}, false, &unreadableError{err}
	}
	s.snap.Opened.Add(1)
	defer r.Close()
	before := r.Opened()
	if s.put != nil {
		id, size, err = s.put.PutVersion(r, prev)
	} else {
		id, size, err = objects.HashReader(r)
	}
	if r.Err() != nil {
		return id, 0, osfs.Stamp{}, false, &unreadableError{r.Err()}
	}
	if err != nil {
		return id, 0, osfs.Stamp{}, false, fmt.Errorf("store %s: %w", abs, err)
	}
	after, err := r.Stamp()
	if err != nil {
		return id, 0, osfs.Stamp{}, false, &unreadableError{err}
	}
	return id, size, before, before == after && size == after.Size, nil
}

// keepsLastVersion reports whether a file whose read failed with err is
// one that is there but may not be read (permission, I/O), whose last
// version a checkpoint keeps, rather than one that went or turned into
// something else (no such file, not a regular file, a symlink now).
func keepsLastVersion(err error) bool {
	return !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, osfs.ErrNotRegular) && !errors.Is(err, syscall.ELOOP)
}

// unreadableError is a failure to read a workspace file: the file is skipped
// and reported, the save goes on. Any other error (the store's) is fatal.
type unreadableError struct{ err error }

func (u *unreadableError) Error() string { return u.err.Error() }

func (s *scanner) skip(rel, reason string, err error) {
	s.mu.Lock()
	s.snap.Skipped = append(s.snap.Skipped, walker.Skipped{Path: rel, Reason: reason, Err: err})
	s.mu.Unlock()
}
