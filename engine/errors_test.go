package engine

import (
	"fmt"
	"testing"

	"github.com/ckpt/ckpt/internal/objects"
)

func TestMessageDropsPackagePrefixes(t *testing.T) {
	err := fmt.Errorf("%w: %w", ErrCorrupt, objects.ErrCorrupt)
	if got := Message(err); got != "store corrupt: corrupt" {
		t.Fatalf("Message = %q", got)
	}
}
