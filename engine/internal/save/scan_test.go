package save

import (
	"testing"
	"time"

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
