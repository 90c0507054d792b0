package crypt

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
)

// BenchmarkSeal measures Put's sealing alone, into a backend that discards.
func BenchmarkSeal(b *testing.B) {
	const size = 16 << 20
	w := Wrap(&opaquePuts{}, benchKey(b))
	data := plaintext(9, size)
	b.SetBytes(size)
	for b.Loop() {
		if _, err := w.Put(context.Background(), "obj", bytes.NewReader(data), size, remote.Condition{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpen measures Get's authentication and decryption of an object
// that the file backend serves from the page cache.
func BenchmarkOpen(b *testing.B) {
	const size = 16 << 20
	raw, err := remote.OpenDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	w := Wrap(raw, benchKey(b))
	data := plaintext(9, size)
	if _, err := w.Put(context.Background(), "obj", bytes.NewReader(data), size, remote.Condition{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	for b.Loop() {
		rc, _, err := w.Get(context.Background(), "obj")
		if err != nil {
			b.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, rc); err != nil || n != size {
			b.Fatalf("read %d bytes: %v", n, err)
		}
		rc.Close()
	}
}

func benchKey(b *testing.B) *Key {
	k, err := ParseKey(bytes.Repeat([]byte{1}, KeySize))
	if err != nil {
		b.Fatal(err)
	}
	return k
}
