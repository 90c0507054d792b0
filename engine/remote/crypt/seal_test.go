package crypt

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
)

// opaquePuts is a backend whose Put reads the body to its end and, like
// some object-store clients, reports a failed read without wrapping it.
type opaquePuts struct {
	remote.Backend
	stored int64
}

func (o *opaquePuts) Put(_ context.Context, _ string, r io.Reader, size int64, _ remote.Condition) (string, error) {
	n, err := io.Copy(io.Discard, r)
	if err != nil || n != size {
		return "", errors.New("upload aborted")
	}
	o.stored = n
	return "etag", nil
}

// pattern yields n bytes without holding them.
type pattern struct{ n int64 }

func (p *pattern) Read(b []byte) (int, error) {
	if p.n == 0 {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), p.n)]
	for i := range b {
		b[i] = byte(p.n - int64(i))
	}
	p.n -= int64(len(b))
	return len(b), nil
}

func TestPutStreamsWithoutHoldingTheObject(t *testing.T) {
	const size = 64 << 20
	inner := &opaquePuts{}
	b := Wrap(inner, testKey(t))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := b.Put(context.Background(), "big", &pattern{n: size}, size, remote.Condition{}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if inner.stored != (layout{seg: segmentSize}).sealedSize(size) {
		t.Fatalf("stored %d bytes, want the sealed size of %d", inner.stored, size)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2<<20 {
		t.Fatalf("Put of %d bytes allocated %d bytes", size, alloc)
	}
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

// What went wrong with the plaintext reaches the caller even through a
// backend that loses it.
func TestPutReportsItsReadersFailureWhateverTheBackendSays(t *testing.T) {
	b := Wrap(&opaquePuts{}, testKey(t))
	ctx := context.Background()
	if _, err := b.Put(ctx, "k", strings.NewReader("short"), segmentSize+10, remote.Condition{}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Put of a short reader = %v, want io.ErrUnexpectedEOF", err)
	}
	gone := errors.New("disk gone")
	if _, err := b.Put(ctx, "k", failingReader{gone}, 10, remote.Condition{}); !errors.Is(err, gone) {
		t.Fatalf("Put of a failing reader = %v, want its error", err)
	}
}
