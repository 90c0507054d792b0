package objects

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/restic/chunker"
)

// The chunker comparison: the store's gear chunker against restic's Rabin
// chunker, same bounds (512 KiB min, 1 MiB average, 8 MiB max), same input,
// one run. Besides throughput each reports chunks/file and how many chunks
// of the original survive an insertion of 100 bytes in the middle (dedup
// after an edit), so the speed is not bought with worse boundaries:
//
//	go test ./objects -run '^$' -bench Chunker -benchtime 5x

// chunkerInput is 64 MiB of seeded random bytes and the same with 100 bytes
// inserted at the middle.
func chunkerInput() (orig, edited []byte) {
	orig = make([]byte, 64<<20)
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 0; i+8 <= len(orig); i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			orig[i+j] = byte(v >> (8 * j))
		}
	}
	mid := len(orig) / 2
	edited = append(append(append([]byte{}, orig[:mid]...), bytes.Repeat([]byte{'x'}, 100)...), orig[mid:]...)
	return orig, edited
}

// gearChunks returns the BLAKE3 ids of data's chunks under the store's chunker.
func gearChunks(tb testing.TB, data []byte) []ID {
	buf := make([]byte, 2*chunkMax)
	cr := newChunkReader(bytes.NewReader(data), buf, 0)
	var ids []ID
	for {
		c, err := cr.next()
		if errors.Is(err, io.EOF) {
			return ids
		}
		if err != nil {
			tb.Fatal(err)
		}
		ids = append(ids, Sum(c))
	}
}

// resticChunks returns the BLAKE3 ids of data's chunks under restic's chunker.
func resticChunks(tb testing.TB, data []byte) []ID {
	c := chunker.New(bytes.NewReader(data), chunker.Pol(0x3DA3358B4DC173))
	buf := make([]byte, chunker.MaxSize)
	var ids []ID
	for {
		ch, err := c.Next(buf)
		if errors.Is(err, io.EOF) {
			return ids
		}
		if err != nil {
			tb.Fatal(err)
		}
		ids = append(ids, Sum(ch.Data))
	}
}

// survivors counts the chunks of after that also occur in before.
func survivors(before, after []ID) int {
	seen := make(map[ID]bool, len(before))
	for _, id := range before {
		seen[id] = true
	}
	n := 0
	for _, id := range after {
		if seen[id] {
			n++
		}
	}
	return n
}

func BenchmarkChunker(b *testing.B) {
	orig, edited := chunkerInput()
	for _, c := range []struct {
		name  string
		split func(testing.TB, []byte) []ID
	}{{"gear", gearChunks}, {"restic", resticChunks}} {
		b.Run(c.name, func(b *testing.B) {
			before := c.split(b, orig)
			after := c.split(b, edited)
			b.SetBytes(int64(len(orig)))
			b.ResetTimer()
			for range b.N {
				c.split(b, orig)
			}
			b.ReportMetric(float64(len(before)), "chunks")
			b.ReportMetric(float64(survivors(before, after))/float64(len(after)), "kept-after-edit")
		})
	}
}
