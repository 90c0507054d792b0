package objects

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/zstd"
)

const benchBlobSize = 256 << 10

// benchData returns n distinct blobs of benchBlobSize bytes of one kind.
func benchData(kind string, n int) [][]byte {
	blobs := make([][]byte, n)
	for i := range blobs {
		if kind == "text" {
			blobs[i] = textBytes(uint64(i), benchBlobSize)
		} else {
			blobs[i] = randomBytes(uint64(i), benchBlobSize)
		}
	}
	return blobs
}

func BenchmarkPut(b *testing.B) {
	for _, kind := range []string{"text", "random"} {
		data := benchData(kind, 256)
		for _, g := range []int{1, 2, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", kind, g), func(b *testing.B) {
				s, _ := testStore(b, Options{})
				batch := s.NewBatch()
				defer batch.Close()
				var next atomic.Int64
				b.SetBytes(benchBlobSize)
				b.ResetTimer()
				var wg sync.WaitGroup
				for range g {
					wg.Go(func() {
						buf := make([]byte, benchBlobSize)
						for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
							// A stamped copy: every blob is unique, nothing is deduplicated.
							copy(buf, data[i%int64(len(data))])
							buf[0], buf[1], buf[2] = byte(i), byte(i>>8), byte(i>>16)
							if _, err := batch.PutBytes(buf); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				if _, err := batch.Sync(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

func BenchmarkGet(b *testing.B) {
	for _, kind := range []string{"text", "random"} {
		b.Run(kind, func(b *testing.B) {
			s, idx := testStore(b, Options{})
			data := benchData(kind, 64)
			ids, _ := save(b, s, idx, data...)
			b.SetBytes(benchBlobSize)
			b.ResetTimer()
			for i := range b.N {
				if _, err := s.Get(ids[i%len(ids)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGetGroupMember reads small files from groups in an order that
// rarely meets the same group twice running, as a diff of scattered edits
// does: each read decodes its group (up to the member) afresh.
func BenchmarkGetGroupMember(b *testing.B) {
	s, idx := testStore(b, Options{Groups: true})
	blobs := make([][]byte, 16<<10)
	for i := range blobs {
		blobs[i] = textBytes(uint64(i), 4<<10)
	}
	ids, _ := save(b, s, idx, blobs...)
	b.SetBytes(4 << 10)
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Get(ids[i*4099%len(ids)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBLAKE3 and BenchmarkZstdEncodeAll measure the raw primitives on
// the blobs BenchmarkPut stores, for comparison.
func BenchmarkBLAKE3(b *testing.B) {
	for _, kind := range []string{"text", "random"} {
		data := benchData(kind, 16)
		b.Run(kind, func(b *testing.B) {
			b.SetBytes(benchBlobSize)
			for i := range b.N {
				Sum(data[i%len(data)])
			}
		})
	}
}

// BenchmarkHashReader hashes a source file of the corpus's median size
// (4 KiB) as a scan reads one, through a plain reader: its bytes and
// allocations per file are what a scan of many small files leaves behind.
func BenchmarkHashReader(b *testing.B) {
	data := textBytes(1, 4<<10)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for range b.N {
		if _, _, err := HashReader(struct{ io.Reader }{bytes.NewReader(data)}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkZstdEncodeAll(b *testing.B) {
	for _, kind := range []string{"text", "random"} {
		data := benchData(kind, 16)
		b.Run(kind, func(b *testing.B) {
			e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			var dst []byte
			b.SetBytes(benchBlobSize)
			for i := range b.N {
				dst = e.EncodeAll(data[i%len(data)], dst[:0])
			}
		})
	}
}
