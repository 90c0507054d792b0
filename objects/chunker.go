package objects

import (
	"errors"
	"io"
	"math/bits"
)

// Content-defined chunking parameters for files above Options.ChunkThreshold.
// They are part of the store's identity: changing them makes new saves of
// unchanged large files produce different chunks (still correct, less dedup).
const (
	chunkMin = 512 << 10
	chunkAvg = 1 << 20
	chunkMax = 8 << 20

	// maxBlobSize bounds a plain (unchunked) blob: the largest allowed
	// ChunkThreshold, and more than chunkMax.
	maxBlobSize = 64 << 20
)

// Normalized chunking masks over the top bits of the gear hash (its low bits
// depend only on the last few bytes): a harder mask before chunkAvg, an
// easier one after it, which narrows the size distribution around chunkAvg.
var (
	maskHard = ^uint64(0) << (64 - (bits.TrailingZeros(chunkAvg) + 2))
	maskEasy = ^uint64(0) << (64 - (bits.TrailingZeros(chunkAvg) - 2))
)

// gear is the table of the rolling gear hash, a fixed pseudo-random
// function of the byte value (splitmix64 from a constant seed), so chunk
// boundaries are the same in every process and version.
var gear = func() (t [256]uint64) {
	x := uint64(0x636b7074636b7074)
	for i := range t {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		t[i] = z ^ (z >> 31)
	}
	return t
}()

// cutPoint returns the length of the first chunk of data: all of it when it
// is at most chunkMin bytes, else a content-defined cut of at most chunkMax.
// The caller passes at least chunkMax bytes unless data ends the stream.
//
// It only reads data, which its callers own alone; it is left out of the
// race detector's instrumentation (go:norace), which checked each byte it
// hashes and made chunking ten times slower under `go test -race`.
//
//go:norace
func cutPoint(data []byte) int {
	n := len(data)
	if n <= chunkMin {
		return n
	}
	n = min(n, chunkMax)
	var h uint64
	i := chunkMin - 64 // the hash window is 64 bytes: start it just before chunkMin
	for ; i < chunkMin; i++ {
		h = h<<1 + gear[data[i]]
	}
	for mid := min(n, chunkAvg); i < mid; i++ {
		h = h<<1 + gear[data[i]]
		if h&maskHard == 0 {
			return i + 1
		}
	}
	for ; i < n; i++ {
		h = h<<1 + gear[data[i]]
		if h&maskEasy == 0 {
			return i + 1
		}
	}
	return n
}

// chunkReader splits a stream into content-defined chunks using one buffer
// of 2*chunkMax bytes, so memory stays bounded whatever the stream's length.
type chunkReader struct {
	r          io.Reader
	buf        []byte
	start, end int
	eof        bool
}

// newChunkReader returns a chunkReader over prefix followed by r; buf must
// have length 2*chunkMax and hold prefix at its start.
func newChunkReader(r io.Reader, buf []byte, prefixLen int) *chunkReader {
	return &chunkReader{r: r, buf: buf, end: prefixLen}
}

// next returns the next chunk, valid until the following call, or io.EOF
// after the last one.
func (c *chunkReader) next() ([]byte, error) {
	if c.end-c.start < chunkMax && !c.eof {
		n := copy(c.buf, c.buf[c.start:c.end])
		c.start, c.end = 0, n
		m, err := io.ReadFull(c.r, c.buf[n:])
		c.end += m
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			c.eof = true
		case err != nil:
			return nil, err
		}
	}
	if c.start == c.end {
		return nil, io.EOF
	}
	n := cutPoint(c.buf[c.start:c.end])
	chunk := c.buf[c.start : c.start+n]
	c.start += n
	return chunk, nil
}
