package crypt

import (
	"context"
	"crypto/cipher"
	"errors"
	"fmt"
	"io"
)

// opener turns a stream of sealed segments back into plaintext. It
// authenticates each segment whole before it yields any of its bytes, so
// a reader sees only authentic bytes, in order, and an error wrapping
// ErrAuth at the first segment that fails.
type opener struct {
	ctx   context.Context
	key   string
	src   io.ReadCloser // sealed segments, from segment next on
	aead  cipher.AEAD
	l     layout
	ad    segmentAD
	size  int64 // plaintext bytes the object holds
	next  int64 // index of the next segment to open
	last  int64 // index of the last segment to open
	skip  int64 // plaintext bytes to drop from the first segment opened
	left  int64 // plaintext bytes still to yield
	buf   []byte
	plain []byte // the part of the open segment not yet yielded
	err   error
	// explain may replace the error of a segment that could not be read
	// or authenticated with a better account of it.
	explain func(error) error
}

// span is the part of an object an opener yields: n plaintext bytes from
// off, which must lie within the object.
type span struct{ off, n int64 }

func newOpener(ctx context.Context, k *Key, l layout, key string, src io.ReadCloser, header []byte, size int64, s span) *opener {
	o := &opener{
		ctx:  ctx,
		key:  key,
		src:  src,
		aead: k.aead,
		l:    l,
		ad:   newSegmentAD(header, key),
		size: size,
		next: s.off / l.seg,
		skip: s.off % l.seg,
		left: s.n,
		buf:  make([]byte, l.seg+segmentOverhead),
	}
	o.last = o.next
	if s.n > 0 {
		o.last = (s.off + s.n - 1) / l.seg
	}
	return o
}

// prime opens the first segment, so that a wrong key or a damaged object
// is reported by the call that opened the object rather than its first
// Read.
func (o *opener) prime() error {
	o.fill()
	return o.err
}

func (o *opener) Read(p []byte) (int, error) {
	for len(o.plain) == 0 {
		if o.err != nil {
			return 0, o.err
		}
		if o.next > o.last {
			return 0, io.EOF
		}
		o.fill()
	}
	n := copy(p, o.plain)
	o.plain = o.plain[n:]
	return n, nil
}

func (o *opener) Close() error { return o.src.Close() }

// fill opens the next segment, or sets err.
func (o *opener) fill() {
	o.err = o.openNext()
	if o.err != nil {
		o.err = o.explain(o.err)
	}
}

// openNext reads and authenticates segment next.
func (o *opener) openNext() error {
	if err := o.ctx.Err(); err != nil {
		return err
	}
	n := o.l.plainLen(o.next, o.size) + segmentOverhead
	if _, err := io.ReadFull(o.src, o.buf[:n]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("crypt: %s: segment %d: %w", o.key, o.next, err)
	}
	final := o.next == o.l.segments(o.size)-1
	plain, err := o.aead.Open(o.buf[nonceSize:nonceSize], o.buf[:nonceSize], o.buf[nonceSize:n], o.ad.at(o.next, final))
	if err != nil {
		return fmt.Errorf("crypt: %s: segment %d: %w", o.key, o.next, ErrAuth)
	}
	o.next++
	plain = plain[o.skip:]
	o.skip = 0
	if int64(len(plain)) > o.left {
		plain = plain[:o.left]
	}
	o.left -= int64(len(plain))
	o.plain = plain
	return nil
}
