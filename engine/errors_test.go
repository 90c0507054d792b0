package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ckpt/ckpt/engine/internal/remotesync"
	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/objects"
	"github.com/ckpt/ckpt/walker"
)

// Errors leave the engine matching their public sentinel and the internal
// original, their text unchanged; damage any layer marked becomes one
// *CorruptError naming the store, once.
func TestErrorsAtTheBoundary(t *testing.T) {
	t.Parallel()
	if ErrCorrupt != objects.ErrCorrupt {
		t.Fatal("engine.ErrCorrupt is not objects.ErrCorrupt")
	}
	cause := &objects.CorruptError{Pack: "/s/packs/00000001.pack", Offset: 12, Reason: "bad header check"}
	err := translate(fmt.Errorf("read blob: %w", cause), "/s")
	var ce *CorruptError
	var oce *objects.CorruptError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.Store != "/s" || !errors.As(err, &oce) || oce != cause {
		t.Fatalf("translate(damage) = %#v", err)
	}
	const want = "store corrupt: read blob: pack /s/packs/00000001.pack at offset 12: bad header check (store at /s)"
	if got := err.Error(); got != want {
		t.Fatalf("corrupt text = %q, want %q", got, want)
	}
	if again := translate(fmt.Errorf("save: %w", err), "/s"); !errors.As(again, &ce) || ce != err {
		t.Fatalf("translate wrapped a *CorruptError twice: %v", again)
	}
	marked := objects.MarkCorrupt(errors.New("setting x = \"y\" is not a number"))
	if got := translate(marked, "/s").Error(); got != `store corrupt: setting x = "y" is not a number (store at /s)` {
		t.Fatalf("marked text = %q", got)
	}
	if translate(marked, "") != marked {
		t.Fatal("translate without a store changed a marked error")
	}

	err = translate(fmt.Errorf("workspace /x: %w", walker.ErrProtected), "/s")
	if !errors.Is(err, ErrProtected) || !errors.Is(err, walker.ErrProtected) {
		t.Fatalf("translate lost a sentinel: %v", err)
	}
	if got := err.Error(); got != "workspace /x: refusing to checkpoint a protected directory" {
		t.Fatalf("protected text = %q", got)
	}
	if plain := errors.New("plain"); translate(plain, "/s") != plain {
		t.Fatal("translate wrapped an error that needed nothing")
	}
}

// Damage found on a remote names the remote, not the local store, however
// far up the boundary it travels.
func TestRemoteDamageNamesTheRemote(t *testing.T) {
	t.Parallel()
	for _, cause := range []error{
		&remotesync.CorruptError{Key: "meta/x", Reason: "content does not match its name"},
		fmt.Errorf("get data/x: %w: bad magic", remote.ErrDamaged),
	} {
		err := translate(fmt.Errorf("push main to origin: %w", remoteError(cause, "origin")), "/s")
		var ce *CorruptError
		if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.Store != "remote origin" {
			t.Errorf("%v became %#v, want a *CorruptError naming remote origin", cause, err)
		}
	}
}
