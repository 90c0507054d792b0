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
	src   io.Reader
	aead  cipher.AEAD
	l     layout
	ad    segmentAD
	size  int64 // plaintext bytes the object holds
	read  int64 // plaintext bytes read from src so far
	next  int64 // index of the next segment to seal
	final int64 // index of the last segment
	plain []byte
	buf   []byte
	out   []byte // the part of buf not yet returned
	err   error
}

func newSealer(aead cipher.AEAD, l layout, key string, src io.Reader, size int64) *sealer {
	header := make([]byte, headerSize)
	copy(header, magic)
	rand.Read(header[len(magic):])
	s := &sealer{
		src:   src,
		aead:  aead,
		l:     l,
		ad:    newSegmentAD(header, key),
		size:  size,
		final: l.segments(size) - 1,
		plain: make([]byte, l.seg),
		buf:   make([]byte, l.seg+segmentOverhead),
	}
	s.out = header
	return s
}

func (s *sealer) Read(p []byte) (int, error) {
	if len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if s.next > s.final {
			return 0, io.EOF
		}
		if s.err = s.sealNext(); s.err != nil {
			return 0, s.err
		}
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// sealNext reads the next segment's plaintext and seals it into out, with
// a fresh random nonce in front.
func (s *sealer) sealNext() error {
	n := s.l.plainLen(s.next, s.size)
	got, err := io.ReadFull(s.src, s.plain[:n])
	s.read += int64(got)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return fmt.Errorf("crypt: read %d of %d bytes: %w", s.read, s.size, io.ErrUnexpectedEOF)
	case err != nil:
		return err
	}
	nonce := s.buf[:nonceSize]
	rand.Read(nonce)
	s.out = s.aead.Seal(nonce, nonce, s.plain[:n], s.ad.at(s.next, s.next == s.final))
	s.next++
	return nil
}
