package objects

import (
	"fmt"
	"io"
	"sync"

	"github.com/zeebo/blake3"
)

// hashers pools HashReader's hashers (each holds an 8 KiB chunk buffer).
var hashers = sync.Pool{New: func() any { return blake3.New() }}

// HashReader returns the ID (BLAKE3-256) and length of r's content without
// storing it. It reads r to EOF through Copy's pooled buffer, with a
// pooled hasher: hashing a file allocates nothing of that size.
func HashReader(r io.Reader) (ID, int64, error) {
	h := hashers.Get().(*blake3.Hasher)
	defer hashers.Put(h)
	h.Reset()
	n, err := Copy(h, r)
	if err != nil {
		return ID{}, n, fmt.Errorf("hash: %w", err)
	}
	var id ID
	h.Sum(id[:0]) // appends within id's own 32 bytes
	return id, n, nil
}
