package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

// Errors leave the engine matching their public sentinel and the internal
// original, with texts free of the internal packages' prefixes.
func TestErrorsAtTheBoundary(t *testing.T) {
	t.Parallel()
	err := storeError(fmt.Errorf("read blob: %w", objects.ErrCorrupt), "/s")
	var ce *CorruptError
	if !errors.Is(err, ErrCorrupt) || !errors.Is(err, objects.ErrCorrupt) || !errors.As(err, &ce) || ce.Store != "/s" {
		t.Fatalf("storeError = %#v", err)
	}
	if got := err.Error(); got != "store corrupt: read blob: corrupt (store at /s)" {
		t.Fatalf("corrupt text = %q", got)
	}
	err = translate(fmt.Errorf("workspace /x: %w", walker.ErrProtected))
	if !errors.Is(err, ErrProtected) || !errors.Is(err, walker.ErrProtected) {
		t.Fatalf("translate lost a sentinel: %v", err)
	}
	if got := err.Error(); got != "workspace /x: refusing to checkpoint a protected directory" {
		t.Fatalf("protected text = %q", got)
	}
	if plain := errors.New("plain"); translate(plain) != plain {
		t.Fatal("translate wrapped an error that needed nothing")
	}
}
