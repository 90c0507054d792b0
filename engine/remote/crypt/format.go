package crypt

import (
	"fmt"
	"io"

	"golang.org/x/crypto/chacha20poly1305"
)

// The stored form of an object; doc.go describes it.
const (
	magic      = "ckptenc\x01"
	objectID   = 24
	headerSize = len(magic) + objectID
	nonceSize  = chacha20poly1305.NonceSizeX
	tagSize    = chacha20poly1305.Overhead
	// segmentOverhead is what sealing adds to each segment.
	segmentOverhead = nonceSize + tagSize
	// segmentSize is the plaintext size of every segment but the last.
	segmentSize = 64 << 10
	// maxSize bounds a plaintext size so that the sealed size cannot
	// overflow an int64.
	maxSize = 1 << 60
)

// layout is the arithmetic of segment positions. Only tests use another
// segment size than segmentSize, to reach many segments with few bytes.
type layout struct {
	seg int64
}

// segments is how many segments hold an object of size plaintext bytes:
// at least one, so that even an empty object is sealed.
func (l layout) segments(size int64) int64 {
	if size == 0 {
		return 1
	}
	return (size + l.seg - 1) / l.seg
}

// sealedSize is the stored size of an object of size plaintext bytes.
func (l layout) sealedSize(size int64) int64 {
	return int64(headerSize) + size + l.segments(size)*segmentOverhead
}

// plainSize inverts sealedSize, and reports false for a stored size that
// no sealed object has.
func (l layout) plainSize(sealed int64) (int64, bool) {
	body := sealed - int64(headerSize)
	if body < segmentOverhead {
		return 0, false
	}
	stride := l.seg + segmentOverhead
	n := (body + stride - 1) / stride
	size := body - n*segmentOverhead
	return size, size >= 0 && size <= maxSize && l.sealedSize(size) == sealed
}

// plainLen is the plaintext length of segment i of an object of size
// bytes.
func (l layout) plainLen(i, size int64) int64 {
	if i < l.segments(size)-1 {
		return l.seg
	}
	return size - i*l.seg
}

// offset is where segment i starts in the stored object.
func (l layout) offset(i int64) int64 {
	return int64(headerSize) + i*(l.seg+segmentOverhead)
}

// readHeader reads and checks the header at the start of r.
func readHeader(r io.Reader, key string) ([]byte, error) {
	header := make([]byte, headerSize)
	if _, err := io.ReadFull(r, header); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("crypt: %s: header: %w", key, err)
	}
	if string(header[:len(magic)]) != magic {
		return nil, fmt.Errorf("crypt: %s: not an encrypted object: %w", key, ErrAuth)
	}
	return header, nil
}
