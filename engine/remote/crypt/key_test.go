package crypt

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/zeebo/blake3"

	"github.com/ckpt/ckpt/engine/remote"
)

func TestGenerateKeyFileWritesAPrivateKeyOnceAndLoadKeyFileReadsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	if err := GenerateKeyFile(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 2*KeySize+1 || data[2*KeySize] != '\n' {
		t.Fatalf("key file holds %q, want %d hex digits and a newline", data, 2*KeySize)
	}
	if runtime.GOOS != "windows" { // Windows keeps no Unix permission bits
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Fatalf("key file mode %v, want 0600", st.Mode().Perm())
		}
	}
	loaded, err := LoadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := ParseKey(data)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Name([]byte("x")) != parsed.Name([]byte("x")) {
		t.Fatalf("LoadKeyFile and ParseKey of the same file give different keys")
	}
	if err := GenerateKeyFile(path); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("GenerateKeyFile over an existing file = %v, want ErrExist", err)
	}
	if again, err := os.ReadFile(path); err != nil || !bytes.Equal(again, data) {
		t.Fatalf("the existing key file changed: %q, %v", again, err)
	}
	other := filepath.Join(t.TempDir(), "other")
	if err := GenerateKeyFile(other); err != nil {
		t.Fatal(err)
	}
	if k, _ := LoadKeyFile(other); k.Name([]byte("x")) == loaded.Name([]byte("x")) {
		t.Fatalf("two generated key files hold the same key")
	}
}

func TestParseKeyAcceptsRawAndHexAndRejectsTheRest(t *testing.T) {
	secret := bytes.Repeat([]byte{0xa5, 0x17}, KeySize/2)
	text := hex.EncodeToString(secret)
	want, err := ParseKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{text, text + "\n", "  " + strings.ToUpper(text) + "\r\n"} {
		k, err := ParseKey([]byte(form))
		if err != nil {
			t.Fatalf("ParseKey(%q): %v", form, err)
		}
		if k.Name(nil) != want.Name(nil) {
			t.Fatalf("ParseKey(%q) differs from the raw key", form)
		}
	}
	for _, bad := range [][]byte{nil, secret[:KeySize-1], append(bytes.Clone(secret), '\n'), []byte(text[:2*KeySize-1]), []byte("zz" + text[2:])} {
		if _, err := ParseKey(bad); !errors.Is(err, ErrBadKey) {
			t.Fatalf("ParseKey(%q) = %v, want ErrBadKey", bad, err)
		}
	}
	if _, err := LoadKeyFile(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadKeyFile(missing) = %v, want ErrNotExist", err)
	}
}

func TestNamesAreKeyedHashesThatMakeValidKeys(t *testing.T) {
	k1, k2 := testKey(t), testKey(t)
	data := []byte("tasks/default")
	name := k1.Name(data)
	if len(name) != 64 || remote.ValidKey(name) != nil || strings.Trim(name, "0123456789abcdef") != "" {
		t.Fatalf("Name = %q, want 64 lower-case hex digits", name)
	}
	if k1.Name(data) != name {
		t.Fatalf("Name is not deterministic")
	}
	plain := blake3.Sum256(data)
	for _, other := range []string{k2.Name(data), k1.Name([]byte("tasks/other")), k1.Name(nil), hex.EncodeToString(plain[:])} {
		if other == name {
			t.Fatalf("Name(%q) = %q collides with another key, other data or the unkeyed hash", data, name)
		}
	}
}
