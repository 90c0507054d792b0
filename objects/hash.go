package objects

import (
	"fmt"
	"io"

	"github.com/zeebo/blake3"
)

// HashReader returns the ID (BLAKE3-256) and length of r's content without
// storing it. It reads r to EOF with a fixed-size buffer.
func HashReader(r io.Reader) (ID, int64, error) {
	h := blake3.New()
	n, err := io.CopyBuffer(h, r, make([]byte, 256<<10))
	if err != nil {
		return ID{}, n, fmt.Errorf("hash: %w", err)
	}
	return ID(h.Sum(nil)), n, nil
}
