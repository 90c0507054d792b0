package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ckpt/ckpt/objects"
)

func testID(s string) objects.ID { return objects.Sum([]byte(s)) }

// sampleTrees covers the shapes a tree takes: empty, every kind, extreme
// values, names that sort by bytes rather than by rune or case.
func sampleTrees() map[string]objects.Tree {
	return map[string]objects.Tree{
		"empty": {},
		"one file": {Entries: []objects.Entry{
			{Name: "a.txt", Kind: objects.KindFile, Mode: 0o644, Size: 12, ID: testID("a")},
		}},
		"all kinds": {Entries: []objects.Entry{
			{Name: ".git_disabled", Kind: objects.KindDir, Mode: 0o755, ID: testID("t")},
			{Name: "B", Kind: objects.KindFile, Mode: 0o4755, Size: 1, ID: testID("b")},
			{Name: "a", Kind: objects.KindSymlink, Mode: 0o777, Size: 5, ID: testID("l")},
			{Name: "a b", Kind: objects.KindFile, Mode: 0, Size: 0, ID: objects.ID{}},
			{Name: "ä", Kind: objects.KindFile, Mode: 0o7777, Size: 1<<63 - 1, ID: testID("big")},
			{Name: "\xff\xfe", Kind: objects.KindFile, Mode: 0o600, Size: 300, ID: testID("bin")},
		}},
	}
}

func TestTreeRoundTrip(t *testing.T) {
	for name, tree := range sampleTrees() {
		t.Run(name, func(t *testing.T) {
			enc, err := EncodeTree(tree)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeTree(enc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tree) {
				t.Fatalf("round trip: got %+v, want %+v", got, tree)
			}
			id, err := TreeID(tree)
			if err != nil || id != objects.Sum(enc) {
				t.Fatalf("TreeID = %v, %v; want Sum(encoding) %v", id, err, objects.Sum(enc))
			}
		})
	}
}

func TestTreeEncodingIsStable(t *testing.T) {
	// The exact bytes of a tree are its identity: pin them.
	tree := objects.Tree{Entries: []objects.Entry{{Name: "ab", Kind: objects.KindFile, Mode: 0o644, Size: 300, ID: objects.ID{1}}}}
	want := append([]byte{1, 1, 2, 'a', 'b', 1, 0xa4, 0x03, 0xac, 0x02, 1}, make([]byte, 31)...)
	got, err := EncodeTree(tree)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("EncodeTree = %x, %v; want %x", got, err, want)
	}
}

func TestEncodeTreeRejects(t *testing.T) {
	file := func(name string) objects.Entry { return objects.Entry{Name: name, Kind: objects.KindFile, Mode: 0o644} }
	cases := map[string][]objects.Entry{
		"empty name":    {file("")},
		"dot":           {file(".")},
		"dotdot":        {file("..")},
		"slash":         {file("a/b")},
		"nul":           {file("a\x00b")},
		"unsorted":      {file("b"), file("a")},
		"duplicate":     {file("a"), file("a")},
		"kind 0":        {{Name: "a", Kind: 0}},
		"kind 4":        {{Name: "a", Kind: 4}},
		"mode too big":  {{Name: "a", Kind: objects.KindFile, Mode: 0o10000}},
		"file type bit": {{Name: "a", Kind: objects.KindFile, Mode: 0o100644}},
		"negative size": {{Name: "a", Kind: objects.KindFile, Size: -1}},
		"dir with size": {{Name: "a", Kind: objects.KindDir, Size: 1}},
	}
	for name, entries := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := EncodeTree(objects.Tree{Entries: entries}); err == nil {
				t.Fatal("EncodeTree accepted an invalid tree")
			}
			if _, err := TreeID(objects.Tree{Entries: entries}); err == nil {
				t.Fatal("TreeID accepted an invalid tree")
			}
		})
	}
}

// rawTree builds a tree encoding without validation, for rejection tests.
func rawTree(entries ...objects.Entry) []byte {
	b := []byte{1}
	b = binary.AppendUvarint(b, uint64(len(entries)))
	for _, e := range entries {
		b = appendString(b, e.Name)
		b = append(b, byte(e.Kind))
		b = binary.AppendUvarint(b, uint64(e.Mode))
		b = binary.AppendUvarint(b, uint64(e.Size))
		b = append(b, e.ID[:]...)
	}
	return b
}

func TestDecodeTreeRejects(t *testing.T) {
	file := func(name string) objects.Entry {
		return objects.Entry{Name: name, Kind: objects.KindFile, Mode: 0o644, Size: 1}
	}
	valid := rawTree(file("a"), file("b"))
	nonMinimal := append([]byte{1, 0x81, 0x00}, valid[2:]...) // count 1 as two bytes
	cases := map[string][]byte{
		"nil":              nil,
		"version 0":        append([]byte{0}, valid[1:]...),
		"version 2":        append([]byte{2}, valid[1:]...),
		"empty name":       rawTree(file("")),
		"dot":              rawTree(file(".")),
		"dotdot":           rawTree(file("..")),
		"slash":            rawTree(file("a/b")),
		"nul":              rawTree(file("a\x00b")),
		"unsorted":         rawTree(file("b"), file("a")),
		"duplicate":        rawTree(file("a"), file("a")),
		"kind 0":           rawTree(objects.Entry{Name: "a", Kind: 0}),
		"kind 9":           rawTree(objects.Entry{Name: "a", Kind: 9}),
		"mode > 0o7777":    rawTree(objects.Entry{Name: "a", Kind: objects.KindFile, Mode: 0o10000}),
		"dir size":         rawTree(objects.Entry{Name: "a", Kind: objects.KindDir, Size: 3}),
		"size > int64":     rawTree(objects.Entry{Name: "a", Kind: objects.KindFile, Size: -1}),
		"trailing byte":    append(append([]byte{}, valid...), 0),
		"count too large":  {1, 3, 1, 'a', 1, 0, 0},
		"huge count":       {1, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"non-minimal":      nonMinimal,
		"overlong uvarint": {1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeTree(b)
			if !errors.Is(err, objects.ErrCorrupt) {
				t.Fatalf("DecodeTree(%x) = %v, want ErrCorrupt", b, err)
			}
		})
	}
}

// checkTruncations asserts that every strict prefix of a valid encoding is
// rejected as corrupt.
func checkTruncations(t *testing.T, enc []byte, decode func([]byte) error) {
	t.Helper()
	for i := range enc {
		if err := decode(enc[:i]); !errors.Is(err, objects.ErrCorrupt) {
			t.Fatalf("decode of the first %d of %d bytes = %v, want ErrCorrupt", i, len(enc), err)
		}
	}
}

func TestDecodeTreeTruncated(t *testing.T) {
	enc, err := EncodeTree(sampleTrees()["all kinds"])
	if err != nil {
		t.Fatal(err)
	}
	checkTruncations(t, enc, func(b []byte) error { _, err := DecodeTree(b); return err })
}

func sampleCheckpoints() map[string]Checkpoint {
	at := time.Date(2026, 3, 4, 5, 6, 7, 891011121, time.UTC)
	return map[string]Checkpoint{
		"first save": {Task: "default", Seq: 1, Root: testID("root"), Time: at, Kind: KindSave},
		"full": {
			Parent: testID("p"), Task: "feature/x y", Seq: 1<<64 - 1, Root: testID("r"),
			Time: at.Add(-100 * 365 * 24 * time.Hour), Message: "edit\nmain.go ✓", Kind: KindBackup, Empty: true,
			Stats: Stats{Files: 100000, Added: 1, Modified: 2, Deleted: 3, BytesHashed: 1 << 40, DurationMs: 1234},
			Meta:  map[string]string{"tool": "write_file", "": "empty key", "z": ""},
			State: testID("state"),
		},
		"zero time": {Task: "t", Seq: 2, Kind: KindSave},
	}
}

func checkpointsEqual(a, b Checkpoint) bool {
	if !a.Time.Equal(b.Time) || a.Time.IsZero() != b.Time.IsZero() {
		return false
	}
	a.Time, b.Time = time.Time{}, time.Time{}
	if len(a.Meta) == 0 && len(b.Meta) == 0 {
		a.Meta, b.Meta = nil, nil
	}
	return reflect.DeepEqual(a, b)
}

func TestCheckpointRoundTrip(t *testing.T) {
	for name, c := range sampleCheckpoints() {
		t.Run(name, func(t *testing.T) {
			enc := EncodeCheckpoint(c)
			got, err := DecodeCheckpoint(enc)
			if err != nil {
				t.Fatal(err)
			}
			if !checkpointsEqual(got, c) {
				t.Fatalf("round trip: got %+v, want %+v", got, c)
			}
			if got.Time.Location() != time.UTC {
				t.Fatalf("decoded time in %v, want UTC", got.Time.Location())
			}
			if !bytes.Equal(EncodeCheckpoint(got), enc) {
				t.Fatal("re-encoding differs")
			}
			if CheckpointID(c) != objects.Sum(enc) {
				t.Fatal("CheckpointID is not Sum(encoding)")
			}
			checkTruncations(t, enc, func(b []byte) error { _, err := DecodeCheckpoint(b); return err })
		})
	}
}

func TestCheckpointEncodingIsCanonical(t *testing.T) {
	c := sampleCheckpoints()["full"]
	enc := EncodeCheckpoint(c)
	// Another time zone and another map instance give the same bytes.
	c2 := c
	c2.Time = c.Time.In(time.FixedZone("X", 5*3600))
	c2.Meta = map[string]string{}
	for k, v := range c.Meta {
		c2.Meta[k] = v
	}
	for range 10 {
		if !bytes.Equal(EncodeCheckpoint(c2), enc) {
			t.Fatal("equal checkpoints encode differently")
		}
	}
	c2.Message += "."
	if CheckpointID(c2) == CheckpointID(c) {
		t.Fatal("different checkpoints share an id")
	}
}

func TestDecodeCheckpointRejects(t *testing.T) {
	base := sampleCheckpoints()["first save"]
	mutate := func(f func(c *Checkpoint)) []byte {
		c := base
		f(&c)
		return EncodeCheckpoint(c)
	}
	valid := EncodeCheckpoint(base)
	withMeta := mutate(func(c *Checkpoint) { c.Meta = map[string]string{"a": "1", "b": "2"} })
	// Swap the two meta keys in place: the meta section ends with
	// 1 'a' 1 '1' 1 'b' 1 '2' before the 32-byte state id.
	unsorted := bytes.Clone(withMeta)
	n := len(unsorted) - 32
	unsorted[n-7], unsorted[n-3] = 'b', 'a'
	dup := bytes.Clone(withMeta)
	dup[n-3] = 'a'
	emptyFlag := bytes.Clone(valid)
	emptyFlag[bytes.LastIndexByte(valid[:len(valid)-32-8], byte(KindSave))+1] = 2
	cases := map[string][]byte{
		"nil":              nil,
		"bad version":      append([]byte{7}, valid[1:]...),
		"trailing":         append(bytes.Clone(valid), 0),
		"empty task":       mutate(func(c *Checkpoint) { c.Task = "" }),
		"nul task":         mutate(func(c *Checkpoint) { c.Task = "a\x00" }),
		"seq 0":            mutate(func(c *Checkpoint) { c.Seq = 0 }),
		"kind 0":           mutate(func(c *Checkpoint) { c.Kind = 0 }),
		"kind 3":           mutate(func(c *Checkpoint) { c.Kind = 3 }),
		"empty flag 2":     emptyFlag,
		"unsorted meta":    unsorted,
		"duplicate meta":   dup,
		"task too long":    mutate(func(c *Checkpoint) { c.Task = strings.Repeat("x", 257) }),
		"huge meta count":  append(bytes.Clone(valid[:len(valid)-33]), 0xff, 0xff, 0x03),
		"truncated header": valid[:10],
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeCheckpoint(b)
			if !errors.Is(err, objects.ErrCorrupt) {
				t.Fatalf("DecodeCheckpoint = %v, want ErrCorrupt", err)
			}
		})
	}
	if _, err := DecodeCheckpoint(withMeta); err != nil {
		t.Fatalf("control case rejected: %v", err)
	}
	if _, err := DecodeCheckpoint(unsorted); err == nil || !strings.Contains(err.Error(), "meta key") {
		t.Fatalf("unsorted meta: got %v, want a meta key order error", err)
	}
}

func sampleDirCache() DirCache {
	return DirCache{Tree: testID("tree"), WrittenNs: 1_700_000_000_123456789, Entries: []CachedFile{
		{Name: "Makefile", Size: 0, MtimeNs: -5, CtimeNs: 1, Inode: 1<<64 - 1, Mode: 0o100644, ID: testID("m")},
		{Name: "main.go", Size: 1 << 40, MtimeNs: 1_700_000_000_000000001, CtimeNs: 1_700_000_000_000000002, Inode: 77, Mode: 0o120777, ID: testID("g")},
	}}
}

func TestDirCacheRoundTrip(t *testing.T) {
	for name, dc := range map[string]DirCache{"empty": {}, "files": sampleDirCache()} {
		t.Run(name, func(t *testing.T) {
			enc := appendDirCache(nil, &dc)
			got, err := decodeDirCache(enc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, dc) {
				t.Fatalf("got %+v, want %+v", got, dc)
			}
			checkTruncations(t, enc, func(b []byte) error { _, err := decodeDirCache(b); return err })
		})
	}
}

func TestDecodeDirCacheRejects(t *testing.T) {
	enc := func(names ...string) []byte {
		dc := DirCache{}
		for _, n := range names {
			dc.Entries = append(dc.Entries, CachedFile{Name: n})
		}
		return appendDirCache(nil, &dc)
	}
	valid := enc("a")
	cases := map[string][]byte{
		"bad version": append([]byte{9}, valid[1:]...),
		"trailing":    append(bytes.Clone(valid), 1),
		"unsorted":    enc("b", "a"),
		"duplicate":   enc("a", "a"),
		"slash":       enc("a/b"),
		"dotdot":      enc(".."),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := decodeDirCache(b); !errors.Is(err, objects.ErrCorrupt) {
				t.Fatalf("decodeDirCache = %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestMetaAndTaskHeadRoundTrip(t *testing.T) {
	m := Meta{FormatVersion: FormatVersion, Workspace: "/home/u/proj", Created: time.Unix(1, 2).UTC()}
	gotM, err := decodeMeta(encodeMeta(m))
	if err != nil || gotM != m {
		t.Fatalf("meta round trip = %+v, %v", gotM, err)
	}
	checkTruncations(t, encodeMeta(m), func(b []byte) error { _, err := decodeMeta(b); return err })
	h := TaskHead{Head: testID("h"), LastSeq: 42}
	gotH, err := decodeTaskHead(encodeTaskHead(h))
	if err != nil || gotH != h {
		t.Fatalf("task head round trip = %+v, %v", gotH, err)
	}
	checkTruncations(t, encodeTaskHead(h), func(b []byte) error { _, err := decodeTaskHead(b); return err })
}

func TestValidName(t *testing.T) {
	for _, ok := range []string{"a", "...", ".git", "a b", "ü", "\xff"} {
		if err := objects.ValidName(ok); err != nil {
			t.Errorf("ValidName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "a/b", "/", "a\x00b"} {
		if objects.ValidName(bad) == nil {
			t.Errorf("ValidName(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"", "a\x00", strings.Repeat("x", 257)} {
		if ValidTask(bad) == nil {
			t.Errorf("ValidTask(%q) accepted", bad)
		}
	}
	if err := ValidTask("feature/x"); err != nil {
		t.Errorf("ValidTask(feature/x) = %v", err)
	}
}
