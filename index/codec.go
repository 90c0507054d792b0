package index

import (
	"encoding/binary"
	"fmt"

	"github.com/ckpt/ckpt/objects"
)

// encodingVersion is the first byte of every encoded record. A record with
// any other first byte is rejected as corrupt.
const encodingVersion = 1

// appendString appends s as a uvarint length followed by its bytes.
func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// reader decodes the primitives of the index encodings. Its first failure
// sticks: later reads return zero values and err keeps the first error, so a
// decoder can read a whole record and check err once per loop iteration.
// Every error is marked with objects.ErrCorrupt.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = objects.MarkCorrupt(fmt.Errorf("at byte %d: %s", r.off, fmt.Sprintf(format, args...)))
	}
}

// remaining is the number of unread bytes.
func (r *reader) remaining() int { return len(r.b) - r.off }

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.fail("truncated")
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

// uvarint reads a minimally encoded uvarint: non-minimal forms (a trailing
// zero byte) are rejected so that every value has exactly one encoding.
func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	switch {
	case n == 0:
		r.fail("truncated")
		return 0
	case n < 0:
		r.fail("uvarint overflows 64 bits")
		return 0
	case n > 1 && r.b[r.off+n-1] == 0:
		r.fail("non-minimal uvarint")
		return 0
	}
	r.off += n
	return v
}

// varint reads a minimally encoded zig-zag varint.
func (r *reader) varint() int64 {
	u := r.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

// fixed64 reads a little-endian 64-bit integer.
func (r *reader) fixed64() int64 {
	p := r.bytes(8)
	if p == nil {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(p))
}

// int reads a uvarint that must fit a non-negative int64.
func (r *reader) int() int64 {
	v := r.uvarint()
	if v > 1<<63-1 {
		r.fail("value %d overflows int64", v)
		return 0
	}
	return int64(v)
}

// count reads an element count and checks it against the bytes left, given
// the minimum encoded size of one element, so a corrupt count cannot make
// the decoder allocate more than the input could hold.
func (r *reader) count(minSize int) int {
	v := r.uvarint()
	if r.err == nil && v > uint64(r.remaining()/minSize) {
		r.fail("count %d exceeds remaining %d bytes", v, r.remaining())
		return 0
	}
	return int(v)
}

// bytes returns the next n bytes, aliasing the input.
func (r *reader) bytes(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(r.remaining()) {
		r.fail("length %d exceeds remaining %d bytes", n, r.remaining())
		return nil
	}
	p := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return p
}

// lenBytes reads a uvarint length and that many bytes, aliasing the input.
func (r *reader) lenBytes() []byte {
	return r.bytes(r.uvarint())
}

func (r *reader) string() string {
	return string(r.lenBytes())
}

func (r *reader) id() objects.ID {
	var id objects.ID
	copy(id[:], r.bytes(objects.IDSize))
	return id
}

// version reads and checks the leading encoding version byte.
func (r *reader) version() {
	if v := r.byte(); r.err == nil && v != encodingVersion {
		r.fail("unsupported encoding version %d", v)
	}
}

// end reports the first error, or an error if unread bytes remain.
func (r *reader) end() error {
	if r.err == nil && r.remaining() != 0 {
		r.fail("%d trailing bytes", r.remaining())
	}
	return r.err
}
