package objects

import (
	"io"
	"sync"
)

// copyBufs pools the buffers Copy streams through.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// Copy copies src to dst until EOF or an error, as io.Copy does, through
// a 256 KiB buffer taken from a pool: hashing or writing a file allocates
// no buffer of its own, so a scan or restore of many files leaves no
// garbage per file for the collector to clear.
func Copy(dst io.Writer, src io.Reader) (int64, error) {
	buf := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(buf)
	return io.CopyBuffer(dst, src, *buf)
}
