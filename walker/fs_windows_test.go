package walker

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf16"

	"golang.org/x/sys/windows"
)

// dirInfoRecord encodes one FILE_ID_BOTH_DIR_INFO record as the listing
// returns it; next is the offset of the following record, 0 for the last.
func dirInfoRecord(name string, attrs, tag uint32, size int64, id uint64, next uint32) []byte {
	u := utf16.Encode([]rune(name))
	rec := make([]byte, offFileName+2*len(u))
	le := binary.LittleEndian
	le.PutUint32(rec, next)
	le.PutUint64(rec[offWriteTime:], 116444736000000000+20_000_000) // 2 s after 1970
	le.PutUint64(rec[offChangeTime:], 116444736000000000+30_000_000)
	le.PutUint64(rec[offEndOfFile:], uint64(size))
	le.PutUint32(rec[offAttributes:], attrs)
	le.PutUint32(rec[offNameLength:], uint32(2*len(u)))
	le.PutUint32(rec[offEaSize:], tag)
	le.PutUint64(rec[offFileID:], id)
	for i, c := range u {
		le.PutUint16(rec[offFileName+2*i:], c)
	}
	return rec
}

// TestParseDirInfoClassifiesReparsePoints covers what Wine cannot create
// (its CreateSymbolicLinkW creates nothing): symlinks and junctions are
// symlinks, never directories to descend into; other reparse points are
// what their attributes say.
func TestParseDirInfoClassifiesReparsePoints(t *testing.T) {
	const (
		reparse    = windows.FILE_ATTRIBUTE_REPARSE_POINT
		dir        = windows.FILE_ATTRIBUTE_DIRECTORY
		junction   = 0xA0000003 // IO_REPARSE_TAG_MOUNT_POINT
		cloudFiles = 0x9000001A // IO_REPARSE_TAG_CLOUD_6, not a name surrogate
	)
	recs := []struct {
		name       string
		attrs, tag uint32
		wantType   fileType
		wantMode   uint32
	}{
		{".", dir, 0, 0, 0},
		{"..", dir, 0, 0, 0},
		{"file.txt", windows.FILE_ATTRIBUTE_ARCHIVE, 0, typeFile, 0o644},
		{"readonly", windows.FILE_ATTRIBUTE_READONLY, 0, typeFile, 0o444},
		{"sub", dir, 0, typeDir, 0o755},
		{"link", reparse, windows.IO_REPARSE_TAG_SYMLINK, typeSymlink, 0o644},
		{"dirlink", reparse | dir, windows.IO_REPARSE_TAG_SYMLINK, typeSymlink, 0o755},
		{"junction", reparse | dir, junction, typeSymlink, 0o755},
		{"placeholder", reparse, cloudFiles, typeFile, 0o644},
		{"日本語 ünï", 0, 0, typeFile, 0o644},
	}
	var buf []byte
	for i, r := range recs {
		rec := dirInfoRecord(r.name, r.attrs, r.tag, int64(10*i), uint64(100+i), 0)
		if i < len(recs)-1 {
			pad := (8 - len(rec)%8) % 8
			rec = append(rec, make([]byte, pad)...)
			binary.LittleEndian.PutUint32(rec, uint32(len(rec)))
		}
		buf = append(buf, rec...)
	}
	ents := parseDirInfo(buf, 7, nil)
	if len(ents) != len(recs)-2 {
		t.Fatalf("%d entries, want %d (without . and ..)", len(ents), len(recs)-2)
	}
	for i, e := range ents {
		r := recs[i+2]
		st := e.st
		if e.name != r.name || st.typ != r.wantType || st.mode != r.wantMode {
			t.Errorf("%q: name %q type %d mode %o, want type %d mode %o", r.name, e.name, st.typ, st.mode, r.wantType, r.wantMode)
		}
		if st.size != int64(10*(i+2)) || st.ino != uint64(102+i) || st.dev != 7 ||
			st.mtimeNs != 2_000_000_000 || st.ctimeNs != 3_000_000_000 {
			t.Errorf("%q: stat %+v", r.name, st)
		}
	}
}

// lstatAt reports each entry as the listing of its directory does: a
// replayed directory's entries read one by one match a listing's.
func TestLstatAtMatchesListing(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"a.txt": "some text", "empty": ""} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(root, "empty"), 0o444); err != nil {
		t.Fatal(err)
	}
	d, _, err := openRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDir(d)
	names, stats, err := readDir(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 3 {
		t.Fatalf("listed %q, want a.txt, empty, sub", names)
	}
	for i, name := range names {
		got, err := lstatAt(d, name)
		if err != nil {
			t.Fatal(err)
		}
		if got != stats[i] {
			t.Errorf("%s: lstatAt %+v, listing %+v", name, got, stats[i])
		}
	}
	if _, err := lstatAt(d, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lstatAt of a missing name: %v, want not exist", err)
	}
}
