package remotesync

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

func sampleSegment(t testing.TB) []byte {
	t.Helper()
	tree := objects.Tree{Entries: []objects.Entry{{Name: "a.txt", Kind: objects.KindFile, Mode: 0o644, Size: 3, ID: objects.Sum([]byte("hi\n"))}}}
	te, err := index.EncodeTree(tree)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := index.TreeID(tree)
	cp := index.Checkpoint{Task: "default", Seq: 1, Root: root, Time: time.Unix(1700000000, 5).UTC(), Kind: index.KindSave}
	loc := blobLoc{ID: tree.Entries[0].ID, Loc: Loc{Object: objects.Sum([]byte("obj")), Offset: 12, Length: 56, Flags: 1, Size: 3}}
	b, err := encodeSegment([][]byte{te}, [][]byte{index.EncodeCheckpoint(cp)}, []blobLoc{loc})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSegmentRoundTripsAndRefusesDamage(t *testing.T) {
	b := sampleSegment(t)
	plain := &Syncer{}
	seg, err := plain.decodeNamed(objects.Sum(b), b)
	if err != nil || len(seg.Trees) != 1 || len(seg.Checkpoints) != 1 || len(seg.Locs) != 1 || seg.Locs[0].Loc.Offset != 12 {
		t.Fatalf("decode: %+v, %v", seg, err)
	}
	for i := range b {
		bad := bytes.Clone(b)
		bad[i] ^= 1
		if _, err := plain.decodeNamed(objects.Sum(b), bad); !errors.Is(err, objects.ErrCorrupt) || !errors.Is(err, objects.ErrCorrupt) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
}

func TestHeadRefusesAnotherTaskOrMalformedIDs(t *testing.T) {
	plain := &Syncer{}
	id := objects.Sum([]byte("x")).String()
	h := Head{Task: "t", Head: id, Tip: id, Segments: []string{id}, LastSeq: 1, TipSeq: 1}
	b, err := encodeHead(h)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := decodeHead(plain.headKey("t"), "t", b); err != nil || got.headID().String() != id {
		t.Fatalf("decode: %+v, %v", got, err)
	}
	if _, err := decodeHead(plain.headKey("u"), "u", b); !errors.Is(err, objects.ErrCorrupt) {
		t.Fatalf("head of another task: %v", err)
	}
	h.Segments = []string{"zz"}
	b, _ = encodeHead(h)
	if _, err := decodeHead(plain.headKey("t"), "t", b); !errors.Is(err, objects.ErrCorrupt) {
		t.Fatalf("malformed segment name: %v", err)
	}
	if plain.headKey("secret task") == plain.headKey("other") || bytes.Contains([]byte(plain.headKey("secret task")), []byte("secret")) {
		t.Fatal("head keys must be distinct hashes that do not show the task name")
	}
}

// hexNamer is a keyed namer for tests: BLAKE3 of a key and the data.
type hexNamer string

func (k hexNamer) Name(data []byte) string { return objects.Sum(append([]byte(k), data...)).String() }

func TestKeyedNamesDependOnTheKeyAndStillVerify(t *testing.T) {
	b := sampleSegment(t)
	plain, keyed, other := &Syncer{}, &Syncer{Names: hexNamer("k1")}, &Syncer{Names: hexNamer("k2")}
	if keyed.sum(b) == plain.sum(b) || keyed.sum(b) == other.sum(b) || keyed.headKey("t") == plain.headKey("t") || keyed.headKey("t") == other.headKey("t") {
		t.Fatal("keyed names must differ from plain names and between keys")
	}
	if keyed.sum(b) != (&Syncer{Names: hexNamer("k1")}).sum(b) {
		t.Fatal("one key must give one name")
	}
	if _, err := keyed.decodeNamed(keyed.sum(b), b); err != nil {
		t.Fatalf("keyed segment: %v", err)
	}
	if _, err := keyed.decodeNamed(plain.sum(b), b); !errors.Is(err, objects.ErrCorrupt) {
		t.Fatalf("a plain name under a key must not verify: %v", err)
	}
}

func FuzzDecodeSegment(f *testing.F) {
	f.Add(sampleSegment(f))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		seg, err := decodeSegment("meta/x", b)
		if err != nil {
			return
		}
		for _, l := range seg.Locs {
			enc := appendLoc(nil, l.Loc)
			back, err := decodeLoc(enc)
			if err != nil || back != l.Loc {
				t.Fatalf("locator %+v does not round-trip: %+v, %v", l.Loc, back, err)
			}
		}
	})
}

func FuzzDecodeLoc(f *testing.F) {
	f.Add(appendLoc(nil, Loc{Offset: 1, Length: 60, Size: 7}))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := decodeLoc(b)
		if err != nil {
			return
		}
		if back, err := decodeLoc(appendLoc(nil, l)); err != nil || back != l {
			t.Fatalf("%+v does not round-trip: %+v, %v", l, back, err)
		}
	})
}
