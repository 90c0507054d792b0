package save

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

// ScannedStat answers only with a record that says what the scan read:
// a regular file's (a symlink's matches on its target alone), whose
// content is what the snapshot holds at that path (a record left from
// before a restore the scan trusted is not), not kept, racy or not (a
// racy record still shows a change by differing), and nothing for a
// vouched snapshot or under a read-only stat cache.
func TestScannedStatAnswersOnlyForRecordsOfTheSnapshotsContent(t *testing.T) {
	t.Parallel()
	db, err := index.Open(filepath.Join(t.TempDir(), "index"), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	held, stale := objects.Sum([]byte("held")), objects.Sum([]byte("before the restore"))
	sub := objects.Tree{Entries: []objects.Entry{{Name: "g", Kind: objects.KindFile, Mode: 0o644, ID: held}}}
	subID, err := index.TreeID(sub)
	if err != nil {
		t.Fatal(err)
	}
	top := objects.Tree{Entries: []objects.Entry{
		{Name: "d", Kind: objects.KindDir, Mode: 0o755, ID: subID},
		{Name: "f", Kind: objects.KindFile, Mode: 0o644, ID: held},
		{Name: "k", Kind: objects.KindFile, Mode: 0o644, ID: held},
		{Name: "l", Kind: objects.KindSymlink, Mode: 0o777, ID: held},
		{Name: "r", Kind: objects.KindFile, Mode: 0o644, ID: held},
	}}
	topID, err := index.TreeID(top)
	if err != nil {
		t.Fatal(err)
	}
	written := time.Hour.Nanoseconds()
	snap := &Snapshot{Root: topID, Pending: newPending()}
	snap.Trees[topID], snap.Trees[subID] = top, sub
	snap.Caches[""] = index.DirCache{Tree: topID, WrittenNs: written, Entries: []index.CachedFile{
		{Name: "d", Mode: cacheMode(walker.KindDir, 0o755), ID: subID, MtimeNs: 1},
		{Name: "f", Size: 4, MtimeNs: 1000, Inode: 7, Mode: cacheMode(walker.KindFile, 0o644), ID: held},
		{Name: "k", Size: 4, Mode: cacheMode(walker.KindFile, 0o644), ID: held},                                    // kept: no stat
		{Name: "l", Size: 4, MtimeNs: 1000, Mode: cacheMode(walker.KindSymlink, 0o777), ID: held},                  // a symlink: matched on its target alone
		{Name: "r", Size: 4, MtimeNs: written - racyMargin + 1, Mode: cacheMode(walker.KindFile, 0o644), ID: held}, // racy
	}}
	snap.Caches["d"] = index.DirCache{Tree: subID, WrittenNs: written, Entries: []index.CachedFile{
		{Name: "g", Size: 18, MtimeNs: 1000, Mode: cacheMode(walker.KindFile, 0o644), ID: stale},
	}}
	st := &Store{DB: db}
	scanned := st.ScannedStat(snap)
	if c, ok := scanned("f"); !ok || c.Size != 4 || c.MtimeNs != 1000 || c.Inode != 7 {
		t.Fatalf("f: %+v, %v; want its record", c, ok)
	}
	if c, ok := scanned("r"); !ok || c.MtimeNs != written-racyMargin+1 {
		t.Fatalf("r: %+v, %v; want its racy record", c, ok)
	}
	for _, rel := range []string{"d/g", "k", "l", "missing", "d/missing", "nodir/x"} {
		if c, ok := scanned(rel); ok {
			t.Errorf("%s: %+v; want no answer", rel, c)
		}
	}
	snap.vouched = true
	if _, ok := st.ScannedStat(snap)("f"); ok {
		t.Error("a vouched snapshot's records answered")
	}
	snap.vouched, st.StatCacheReadOnly = false, true
	if _, ok := st.ScannedStat(snap)("f"); ok {
		t.Error("a read-only stat cache's records answered")
	}
}
