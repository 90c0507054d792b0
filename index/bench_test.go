package index

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ckpt/ckpt/objects"
)

// benchTree is a directory of n files with realistic names.
func benchTree(n int) objects.Tree {
	t := objects.Tree{Entries: make([]objects.Entry, n)}
	for i := range t.Entries {
		name := fmt.Sprintf("component_%05d.tsx", i)
		t.Entries[i] = objects.Entry{Name: name, Kind: objects.KindFile, Mode: 0o644, Size: int64(1000 + i), ID: objects.Sum([]byte(name))}
	}
	return t
}

func benchDirCache(n int) DirCache {
	dc := DirCache{Tree: testID("t"), WrittenNs: 1_700_000_000_000_000_000, Entries: make([]CachedFile, n)}
	for i := range dc.Entries {
		name := fmt.Sprintf("component_%05d.tsx", i)
		dc.Entries[i] = CachedFile{
			Name: name, Size: int64(1000 + i), MtimeNs: 1_699_000_000_000_000_000 + int64(i), CtimeNs: 1_699_000_000_000_000_000 + int64(i),
			Inode: uint64(4_000_000 + i), Mode: 0o100644, ID: objects.Sum([]byte(name)),
		}
	}
	return dc
}

func BenchmarkEncodeTree100(b *testing.B) {
	t := benchTree(100)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeTree(t); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeTree100(b *testing.B) {
	enc, err := EncodeTree(benchTree(100))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeTree(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiffTree4000 takes the delta between two versions of a wide
// directory (4,000 files, as the bench corpus's widest) that differ in one
// edited, one added and one removed file: a walk of both sorted lists,
// what a save of an edit there and a restore's plan both pay.
func BenchmarkDiffTree4000(b *testing.B) {
	base := benchTree(4000)
	next := objects.Tree{Entries: slices.Clone(base.Entries)}
	next.Entries[1000].ID = objects.Sum([]byte("edited"))
	next.Entries = slices.Delete(next.Entries, 3000, 3001)
	next.Entries = slices.Insert(next.Entries, 2000, objects.Entry{Name: "component_01999a.tsx", Kind: objects.KindFile, Mode: 0o644})
	b.ReportAllocs()
	for b.Loop() {
		if removed, upserts := diffTree(base, next); len(removed) != 1 || len(upserts) != 2 {
			b.Fatalf("delta: %d removed, %d upserts; want 1 and 2", len(removed), len(upserts))
		}
	}
}

func BenchmarkDecodeDirCache100(b *testing.B) {
	dc := benchDirCache(100)
	enc := appendDirCache(nil, &dc)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeDirCache(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAllDirCaches1000 prefetches 1000 directories of 100 files: the
// stat cache of a 100k-file workspace.
func BenchmarkAllDirCaches1000(b *testing.B) {
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	dc := benchDirCache(100)
	batch := db.NewBatch()
	for i := range 1000 {
		batch.PutDirCache(fmt.Sprintf("pkg%04d/src", i), dc)
	}
	if err := batch.Commit(); err != nil {
		b.Fatal(err)
	}
	batch.Close()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := db.AllDirCaches(func(string, DirCache) error { n++; return nil }); err != nil || n != 1000 {
			b.Fatal(n, err)
		}
	}
}

func BenchmarkCommit10kLocators(b *testing.B) {
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ids := make([]objects.ID, 10000)
	for i := range ids {
		ids[i] = objects.Sum(fmt.Appendf(nil, "blob %d", i))
	}
	b.ReportAllocs()
	round := 0
	for b.Loop() {
		round++
		batch := db.NewBatch()
		for i, id := range ids {
			id[0] ^= byte(round) // new keys each round
			batch.PutLocator(id, objects.Locator{Pack: uint32(round), Offset: int64(i) << 12, Length: 4000, Size: 9000})
		}
		if err := batch.Commit(); err != nil {
			b.Fatal(err)
		}
		batch.Close()
	}
}
