package crypt

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// opener turns a stream of sealed segments back into plaintext. It
// authenticates each segment whole before it yields any of its bytes, so
// a reader sees only authentic bytes, in order, and an error wrapping
// ErrAuth at the first segment that fails.
type opener struct {
	chunks
	segmentCipher
	ctx  context.Context
	key  string
	src  io.ReadCloser // sealed segments, from segment next on
	last int64         // index of the last segment to open
	skip int64         // plaintext bytes to drop from the first segment opened
	left int64         // plaintext bytes still to yield
	// explain may replace the error of a segment that could not be read
	// or authenticated with a better account of it.
	explain func(error) error
}

// span is the part of an object an opener yields: n plaintext bytes from
// off, which must lie within the object.
type span struct{ off, n int64 }

func newOpener(ctx context.Context, k *Key, l layout, key string, src io.ReadCloser, header []byte, size int64, s span) *opener {
	o := &opener{
		segmentCipher: newSegmentCipher(k.aead, l, header, key, size, s.off/l.seg),
		ctx:           ctx,
		key:           key,
		src:           src,
		skip:          s.off % l.seg,
		left:          s.n,
	}
	o.last = o.next
	if s.n > 0 {
		o.last = (s.off + s.n - 1) / l.seg
	}
	o.produce = o.fill
	return o
}

// prime opens the first segment, so that a wrong key or a damaged object
// is reported by the call that opened the object rather than its first
// Read.
func (o *opener) prime() error {
	o.pending, o.err = o.fill()
	return o.err
}

func (o *opener) Close() error { return o.src.Close() }

// fill opens the next segment to yield, and explains its failure.
func (o *opener) fill() ([]byte, error) {
	if o.next > o.last {
		return nil, io.EOF
	}
	plain, err := o.openNext()
	if err != nil {
		return nil, o.explain(err)
	}
	return plain, nil
}

// openNext reads and authenticates segment next and returns the part of
// its plaintext to yield.
func (o *opener) openNext() ([]byte, error) {
	if err := o.ctx.Err(); err != nil {
		return nil, err
	}
	n := o.plainLen() + segmentOverhead
	if _, err := io.ReadFull(o.src, o.sealed(n)); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("crypt: %s: segment %d: %w", o.key, o.next, err)
	}
	plain, ok := o.open(n)
	if !ok {
		return nil, fmt.Errorf("crypt: %s: segment %d: %w", o.key, o.next, ErrAuth)
	}
	plain = plain[o.skip:]
	o.skip = 0
	if int64(len(plain)) > o.left {
		plain = plain[:o.left]
	}
	o.left -= int64(len(plain))
	return plain, nil
}
