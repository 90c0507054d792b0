package save

import (
	"testing"
	"time"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/internal/osfs"
	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

func TestStatMatchesRejectsRacyEntries(t *testing.T) {
	t.Parallel()
	ent := statEntry(1000, 5_000_000_123)
	prev := cacheRecord(&ent, &entryResult{id: objects.Sum([]byte("x")), size: 1000})
	if !statMatches(&prev, &ent, ent.MtimeNs+racyMargin) {
		t.Fatal("an entry older than the margin must match")
	}
	if statMatches(&prev, &ent, ent.MtimeNs+racyMargin-1) {
		t.Fatal("an entry within the margin of the cache write is racy and must not match")
	}
	changed := ent
	changed.CtimeNs++
	if statMatches(&prev, &changed, ent.MtimeNs+time.Hour.Nanoseconds()) {
		t.Fatal("a ctime change must not match")
	}
}

func statEntry(size, mtimeNs int64) walker.Entry {
	return walker.Entry{Name: "f", Kind: walker.KindFile, Mode: 0o644, Size: size, MtimeNs: mtimeNs, CtimeNs: mtimeNs, Ino: 42}
}

// A stamp of whole seconds comes from a file system that keeps no
// fraction (ext4 with 128-byte inodes, HFS+), even seconds from FAT: a
// rewrite of the same size within that second (or two) keeps the stamp,
// so a record written then is racy, where a nanosecond stamp's margin is
// racyMargin.
func TestStatMatchesRejectsEntriesWithinACoarseStampsResolution(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mtimeNs, resolution int64
	}{
		{7_000_000_000, int64(time.Second)},     // whole seconds
		{8_000_000_000, int64(2 * time.Second)}, // even seconds
		{7_123_456_789, racyMargin},
	} {
		ent := statEntry(1000, tc.mtimeNs)
		prev := cacheRecord(&ent, &entryResult{id: objects.Sum([]byte("x")), size: 1000})
		if statMatches(&prev, &ent, tc.mtimeNs+tc.resolution-1) {
			t.Errorf("mtime %d: a record written within %d ns matched", tc.mtimeNs, tc.resolution)
		}
		if !statMatches(&prev, &ent, tc.mtimeNs+tc.resolution) {
			t.Errorf("mtime %d: a record written %d ns after did not match", tc.mtimeNs, tc.resolution)
		}
	}
}

// A record takes the stat of the read's open only for a file rewritten
// between its listing and its read with its permissions kept, and then
// only the fields the open's look gives; every other file keeps the
// listing's stat.
func TestCacheRecordTakesTheOpensStatOnlyForAFileRewrittenBeforeItsRead(t *testing.T) {
	t.Parallel()
	ent := statEntry(1000, 5_000_000_000) // ctime = mtime, inode 42, mode 0o644
	listed := func() index.CachedFile {
		return index.CachedFile{Name: "f", Size: 1200, MtimeNs: ent.MtimeNs, CtimeNs: ent.CtimeNs, Inode: ent.Ino, Mode: cacheMode(walker.KindFile, 0o644)}
	}
	opened := func(c index.CachedFile) index.CachedFile {
		c.MtimeNs, c.CtimeNs, c.Inode = 6_000_000_000, 6_000_000_001, 43
		return c
	}
	for _, tc := range []struct {
		name  string
		stamp osfs.Stamp
		want  index.CachedFile
	}{
		{"not read holding still", osfs.Stamp{}, listed()},
		{"not rewritten: the open sees another inode alone", osfs.Stamp{Size: 1000, ModTime: 5_000_000_000, ChangeTime: 5_000_000_000, Inode: 99, Perm: 0o644}, listed()},
		{"rewritten", osfs.Stamp{Size: 1200, ModTime: 6_000_000_000, ChangeTime: 6_000_000_001, Inode: 43, Perm: 0o644}, opened(listed())},
		{"rewritten with other permissions", osfs.Stamp{Size: 1200, ModTime: 6_000_000_000, ChangeTime: 6_000_000_001, Inode: 43, Perm: 0o755}, listed()},
		{"rewritten, a look without change time, inode or mode (Windows)", osfs.Stamp{Size: 1200, ModTime: 6_000_000_000}, func() index.CachedFile {
			c := listed()
			c.MtimeNs = 6_000_000_000
			return c
		}()},
	} {
		got := cacheRecord(&ent, &entryResult{size: 1200, opened: tc.stamp})
		if got != tc.want {
			t.Errorf("%s: record %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// The prefetcher leaves a file that looks as its record holds it, in
// every field the open's look gives.
func TestLooksRecordedComparesTheFieldsTheStampGives(t *testing.T) {
	t.Parallel()
	rec := index.CachedFile{Size: 10, MtimeNs: 20, CtimeNs: 30, Inode: 40}
	for _, tc := range []struct {
		stamp osfs.Stamp
		want  bool
	}{
		{osfs.Stamp{Size: 10, ModTime: 20, ChangeTime: 30, Inode: 40, Perm: 0o644}, true},
		{osfs.Stamp{Size: 10, ModTime: 20}, true}, // Windows: no change time, no inode
		{osfs.Stamp{Size: 11, ModTime: 20, ChangeTime: 30, Inode: 40}, false},
		{osfs.Stamp{Size: 10, ModTime: 21, ChangeTime: 30, Inode: 40}, false},
		{osfs.Stamp{Size: 10, ModTime: 20, ChangeTime: 31, Inode: 40}, false},
		{osfs.Stamp{Size: 10, ModTime: 20, ChangeTime: 30, Inode: 41}, false},
	} {
		if got := looksRecorded(tc.stamp, rec); got != tc.want {
			t.Errorf("looksRecorded(%+v) = %v, want %v", tc.stamp, got, tc.want)
		}
	}
}
