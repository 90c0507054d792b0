package objects

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"slices"

	"github.com/klauspost/compress/zstd"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// minSavingDivisor sets when compression pays: a compressed payload is kept
// only if it saves at least 1/32 (~3%) of the raw length. Random data is
// stored raw, which also makes reading it a plain copy.
const minSavingDivisor = 32

// probeLen is the prefix of a large payload compressed first: when even it
// does not compress (media, archives), the rest is not tried.
const probeLen = 64 << 10

// codec holds GOMAXPROCS zstd encoders, made on first use and kept, and a
// bounded free list of decoders, each used by one goroutine at a time
// through EncodeAll/DecodeAll or as a prefixDecoder (a decoder keeps the
// window of the last frame it streamed, at most maxGroupSize plus a
// block). Compressions wait for a free encoder rather
// than make one more: compression is CPU-bound, and every encoder made and
// dropped allocated its window anew (the largest allocator of a first save
// before). Neither writes or checks zstd's own checksum: BLAKE3 verifies
// every blob. A codec is safe for concurrent use.
type codec struct {
	level zstd.EncoderLevel
	enc   chan *zstd.Encoder
	dec   chan *zstd.Decoder
	// deltaEnc holds the encoders of delta records, each given its base as
	// a dictionary for one frame (deltaEncode): [0] for bases up to
	// deltaLargeBase, [1] for larger ones.
	deltaEnc [2]chan *zstd.Encoder
}

// newCodec returns a codec for the given Options.Level (0..4).
func newCodec(level int) (*codec, error) {
	levels := [...]zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedFastest, zstd.SpeedDefault, zstd.SpeedBetterCompression, zstd.SpeedBestCompression}
	if level < 0 || level >= len(levels) {
		return nil, fmt.Errorf("compression level %d out of range 0..%d", level, len(levels)-1)
	}
	n := runtime.GOMAXPROCS(0)
	c := &codec{level: levels[level], enc: make(chan *zstd.Encoder, n), dec: make(chan *zstd.Decoder, n),
		deltaEnc: [2]chan *zstd.Encoder{make(chan *zstd.Encoder, n), make(chan *zstd.Encoder, n)}}
	for range n {
		c.enc <- nil // a slot: its encoder is made on first use
		c.deltaEnc[0] <- nil
		c.deltaEnc[1] <- nil
	}
	return c, nil
}

// compress appends the stored form of src to dst[:0] and returns it with
// its flags: a zstd frame when that saves enough, else src itself (not
// copied). A nil codec stores everything as it is. With probe set, a large src whose first probeLen bytes do not
// compress is not tried further; a group (many blobs, one of which may be
// random) is compressed without the probe.
func (c *codec) compress(dst, src []byte, probe bool) ([]byte, Flags, error) {
	if c == nil || len(src) < 64 {
		return src, 0, nil
	}
	return c.encode(src, func(e *zstd.Encoder) []byte {
		if probe && len(src) > 4*probeLen {
			if out := e.EncodeAll(src[:probeLen], dst[:0]); len(out) > probeLen-probeLen/minSavingDivisor {
				return nil
			}
		}
		return e.EncodeAll(src, dst[:0])
	})
}

// compressFrames is compress (without the probe) into independent zstd
// frames of frameLen bytes of src each, the last up to half as much
// again, so that a reader decodes only the frames holding what it reads.
// Every frame declares its decoded length. stop, when set, is asked
// before every frame but the first: its error ends the call, with
// nothing to store, within a frame's encoding (a group's 1 MiB at the
// recompression level is tens of milliseconds, a frame a quarter of it).
func (c *codec) compressFrames(dst, src []byte, frameLen int, stop func() error) ([]byte, Flags, error) {
	if c == nil || len(src) < 64 {
		return src, 0, nil
	}
	var stopped error
	out, flags, err := c.encode(src, func(e *zstd.Encoder) []byte {
		out := dst[:0]
		for start := 0; start < len(src); {
			if start > 0 && stop != nil {
				if stopped = stop(); stopped != nil {
					return nil
				}
			}
			end := start + frameLen
			if len(src)-end < frameLen/2 {
				end = len(src)
			}
			out = e.EncodeAll(src[start:end], out)
			start = end
		}
		return out
	})
	if stopped != nil {
		return nil, 0, stopped
	}
	return out, flags, err
}

// encode runs enc with one of the codec's encoders and keeps its output
// when that saves enough (nil: it did not try it all).
func (c *codec) encode(src []byte, enc func(*zstd.Encoder) []byte) ([]byte, Flags, error) {
	e := <-c.enc
	defer func() { c.enc <- e }()
	if e == nil {
		var err error
		e, err = zstd.NewWriter(nil, c.encoderOptions()...)
		if err != nil {
			return nil, 0, fmt.Errorf("zstd encoder: %w", err)
		}
	}
	out := enc(e)
	if out == nil || len(out) > len(src)-len(src)/minSavingDivisor {
		return src, 0, nil
	}
	return out, pack.FlagCompressed, nil
}

// release drops the codec's block and delta encoders, to be made again
// on next use. It waits for an encoder in use; one taken while it runs may
// be kept (the recompression codec's callers hold the store's write lock,
// so none is).
func (c *codec) release() {
	for _, pool := range [...]chan *zstd.Encoder{c.enc, c.deltaEnc[0], c.deltaEnc[1]} {
		for range cap(pool) {
			if e := <-pool; e != nil {
				e.Close()
			}
			pool <- nil
		}
	}
}

// encoderOptions are the options of the codec's encoders.
func (c *codec) encoderOptions() []zstd.EOption {
	return []zstd.EOption{zstd.WithEncoderLevel(c.level), zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true), zstd.WithZeroFrames(true)}
}

// decompress decodes the zstd frames of src, which must yield exactly size bytes, into
// a new slice. It never allocates more than size bytes of output, so a
// damaged frame cannot balloon. The error is a reason for a CorruptError.
func (c *codec) decompress(src []byte, size int64) ([]byte, error) {
	d, err := c.decoder()
	if err != nil {
		return nil, err
	}
	out, err := d.DecodeAll(src, make([]byte, 0, size))
	c.putDecoder(d)
	if err != nil {
		return nil, fmt.Errorf("undecodable payload: %w", err)
	}
	if int64(len(out)) != size {
		return nil, fmt.Errorf("payload decodes to %d bytes, want %d", len(out), size)
	}
	return out, nil
}

// decoder takes a decoder from the free list, or makes one.
func (c *codec) decoder() (*zstd.Decoder, error) {
	select {
	case d := <-c.dec:
		return d, nil
	default:
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.IgnoreChecksum(true), zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderMaxMemory(maxBlobSize+1))
		if err != nil {
			return nil, fmt.Errorf("zstd decoder: %w", err)
		}
		return d, nil
	}
}

// putDecoder returns d to the free list, or closes it when the list is full.
func (c *codec) putDecoder(d *zstd.Decoder) {
	select {
	case c.dec <- d:
	default:
		d.Close()
	}
}

// prefixDecoder decodes a zstd frame a prefix at a time: a reader of one
// member of a group record decodes the table, then the contents up to
// that member, and stops, instead of decoding the whole frame.
type prefixDecoder struct {
	c    *codec
	d    *zstd.Decoder
	size int64
	// out is what has been decoded, the frame's first len(out) bytes.
	out []byte
}

// prefixDecoder starts decoding the zstd frame src, whose content must be
// size bytes (at most maxGroupSize). close returns its decoder. A frame
// whose header declares another content size, or a window larger than
// maxGroupSize, is refused before anything is decoded: a streaming
// decoder allocates the window the header asks for, and a damaged header
// must not make it ask for more than a group can hold.
func (c *codec) prefixDecoder(src []byte, size int64) (*prefixDecoder, error) {
	var fh zstd.Header
	if err := fh.Decode(src); err != nil {
		return nil, fmt.Errorf("undecodable payload: %w", err)
	}
	switch {
	case size > maxGroupSize:
		return nil, fmt.Errorf("payload of %d bytes is too large to decode in part", size)
	case fh.HasFCS && fh.FrameContentSize != uint64(size):
		return nil, fmt.Errorf("payload frame declares %d bytes, want %d", fh.FrameContentSize, size)
	case !fh.SingleSegment && fh.WindowSize > maxGroupSize:
		return nil, fmt.Errorf("payload frame asks for a %d-byte window", fh.WindowSize)
	}
	d, err := c.decoder()
	if err != nil {
		return nil, err
	}
	if err := d.Reset(bytes.NewReader(src)); err != nil {
		c.putDecoder(d)
		return nil, fmt.Errorf("undecodable payload: %w", err)
	}
	return &prefixDecoder{c: c, d: d, size: size}, nil
}

// decodeTo decodes the frame's first n bytes (n at most its size) into
// out, when it holds fewer. The error is a reason for a CorruptError.
func (p *prefixDecoder) decodeTo(n int64) error {
	if n > p.size {
		return fmt.Errorf("payload decodes past its %d bytes", p.size)
	}
	if have := int64(len(p.out)); n > have {
		p.out = slices.Grow(p.out, int(n-have))[:n]
		if _, err := io.ReadFull(p.d, p.out[have:]); err != nil {
			p.out = p.out[:have]
			return fmt.Errorf("undecodable payload: %w", err)
		}
	}
	return nil
}

// close returns the decoder to the codec, releasing the frame it read.
func (p *prefixDecoder) close() {
	_ = p.d.Reset(nil)
	p.c.putDecoder(p.d)
}
