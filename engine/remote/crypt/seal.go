package crypt

import (
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"io"
)

// sealer is the stored form of an object as a stream: it reads the
// plaintext one segment at a time and yields the header, then each sealed
// segment. It holds one segment of plaintext and one of ciphertext, never
// the object.
type sealer struct {
	chunks
	segmentCipher
	src    io.Reader
	read   int64 // plaintext bytes read from src so far
	plain  []byte
	failed error // what went wrong reading src
}

func newSealer(aead cipher.AEAD, l layout, key string, src io.Reader, size int64) *sealer {
	header := make([]byte, headerSize)
	copy(header, magic)
	rand.Read(header[len(magic):])
	s := &sealer{
		segmentCipher: newSegmentCipher(aead, l, header, key, size, 0),
		src:           src,
		plain:         make([]byte, l.seg),
	}
	s.chunks = chunks{produce: s.sealNext, pending: header}
	return s
}

// sealNext reads the next segment's plaintext and seals it.
func (s *sealer) sealNext() ([]byte, error) {
	if s.done() {
		return nil, io.EOF
	}
	plain := s.plain[:s.plainLen()]
	got, err := io.ReadFull(s.src, plain)
	s.read += int64(got)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		s.failed = fmt.Errorf("crypt: read %d of %d bytes: %w", s.read, s.size, io.ErrUnexpectedEOF)
		return nil, s.failed
	case err != nil:
		s.failed = err
		return nil, err
	}
	return s.seal(plain), nil
}
