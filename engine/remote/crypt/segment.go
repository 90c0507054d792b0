package crypt

import (
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
)

// segmentCipher seals or opens the segments of one object in order: what
// the sealer and the opener share. It holds one sealed segment.
type segmentCipher struct {
	aead cipher.AEAD
	l    layout
	ad   []byte // header || index || last flag || object key; see at
	size int64  // plaintext bytes the object holds
	next int64  // index of the next segment to seal or open
	buf  []byte // nonce || ciphertext || tag
}

func newSegmentCipher(aead cipher.AEAD, l layout, header []byte, key string, size, next int64) segmentCipher {
	ad := make([]byte, headerSize+9+len(key))
	copy(ad, header)
	copy(ad[headerSize+9:], key)
	return segmentCipher{aead: aead, l: l, ad: ad, size: size, next: next, buf: make([]byte, l.seg+segmentOverhead)}
}

// plainLen is the plaintext length of segment next.
func (c *segmentCipher) plainLen() int64 { return c.l.plainLen(c.next, c.size) }

// done reports that every segment has been sealed or opened.
func (c *segmentCipher) done() bool { return c.next >= c.l.segments(c.size) }

// at is the associated data of segment next, rewritten in place.
func (c *segmentCipher) at() []byte {
	binary.BigEndian.PutUint64(c.ad[headerSize:], uint64(c.next))
	c.ad[headerSize+8] = 0
	if c.next == c.l.segments(c.size)-1 {
		c.ad[headerSize+8] = 1
	}
	return c.ad
}

// seal seals plain, the plaintext of segment next, with a fresh random
// nonce, and moves on. The result is valid until the next call.
func (c *segmentCipher) seal(plain []byte) []byte {
	nonce := c.buf[:nonceSize]
	rand.Read(nonce)
	sealed := c.aead.Seal(nonce, nonce, plain, c.at())
	c.next++
	return sealed
}

// sealed is where the caller puts segment next's n stored bytes for open.
func (c *segmentCipher) sealed(n int64) []byte { return c.buf[:n] }

// open authenticates and decrypts segment next, of n stored bytes put in
// sealed(n), and moves on. The plaintext is valid until the next call.
func (c *segmentCipher) open(n int64) ([]byte, bool) {
	plain, err := c.aead.Open(c.buf[nonceSize:nonceSize], c.buf[:nonceSize], c.buf[nonceSize:n], c.at())
	if err != nil {
		return nil, false
	}
	c.next++
	return plain, true
}
