package index

import (
	"bytes"
	"testing"
)

// Seed inputs come from testdata/fuzz/<target>/ plus the f.Add calls below.

func FuzzDecodeTree(f *testing.F) {
	for _, tree := range sampleTrees() {
		enc, err := EncodeTree(tree)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tree, err := DecodeTree(b)
		if err != nil {
			return
		}
		enc, err := EncodeTree(tree)
		if err != nil {
			t.Fatalf("decoded tree does not encode: %v", err)
		}
		if !bytes.Equal(enc, b) {
			t.Fatalf("decode→encode changed the bytes:\n in  %x\n out %x", b, enc)
		}
	})
}

func FuzzDecodeCheckpoint(f *testing.F) {
	for _, c := range sampleCheckpoints() {
		f.Add(EncodeCheckpoint(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCheckpoint(b)
		if err != nil {
			return
		}
		if err := validCheckpoint(&c); err != nil {
			t.Fatalf("decoded checkpoint is invalid: %v", err)
		}
		if enc := EncodeCheckpoint(c); !bytes.Equal(enc, b) {
			t.Fatalf("decode→encode changed the bytes:\n in  %x\n out %x", b, enc)
		}
	})
}

func FuzzDecodeDirCache(f *testing.F) {
	dc := sampleDirCache()
	f.Add(appendDirCache(nil, &dc))
	f.Add(appendDirCache(nil, &DirCache{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		dc, err := decodeDirCache(b)
		if err != nil {
			return
		}
		if err := validDirCache(&dc); err != nil {
			t.Fatalf("decoded dir cache is invalid: %v", err)
		}
		if enc := appendDirCache(nil, &dc); !bytes.Equal(enc, b) {
			t.Fatalf("decode→encode changed the bytes:\n in  %x\n out %x", b, enc)
		}
	})
}

func FuzzDecodeTreeDelta(f *testing.F) {
	trees := sampleTrees()
	for depth, pair := range [][2]string{{"empty", "all kinds"}, {"all kinds", "one file"}, {"one file", "all kinds"}} {
		removed, upserts := diffTree(trees[pair[0]], trees[pair[1]])
		enc, err := appendTreeDelta(nil, &treeDelta{depth: uint64(depth + 1), base: testID("base"), removed: removed, upserts: upserts})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeTreeDelta(b)
		if err != nil {
			return
		}
		enc, err := appendTreeDelta(nil, &d)
		if err != nil {
			t.Fatalf("decoded delta does not encode: %v", err)
		}
		if !bytes.Equal(enc, b) {
			t.Fatalf("decode→encode changed the bytes:\n in  %x\n out %x", b, enc)
		}
	})
}
