package save

import (
	"testing"
	"time"

	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

func TestStatMatchesRejectsRacyEntries(t *testing.T) {
	t.Parallel()
	ent := statEntry(1000, 5_000_000_000)
	prev := cacheRecord(&ent, objects.Sum([]byte("x")), 1000)
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
