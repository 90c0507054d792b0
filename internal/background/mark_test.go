package background

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// One Claim holds a store's mark at a time; Running names its holder while
// it holds it, and no one once it let go.
func TestClaimIsExclusiveAndRunningNamesTheHolder(t *testing.T) {
	store := t.TempDir()
	if pid, err := Running(store); err != nil || pid != 0 {
		t.Fatalf("Running before any claim: %d, %v", pid, err)
	}
	release, ok, err := Claim(store)
	if err != nil || !ok {
		t.Fatalf("first claim: %v %v", ok, err)
	}
	if pid, err := Running(store); err != nil || pid != os.Getpid() {
		t.Fatalf("Running while claimed: %d, %v; want %d", pid, err, os.Getpid())
	}
	if _, ok, err := Claim(store); err != nil || ok {
		t.Fatalf("second claim while the first holds: %v %v, want refused", ok, err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if pid, err := Running(store); err != nil || pid != 0 {
		t.Fatalf("Running after release: %d, %v", pid, err)
	}
	release, ok, err = Claim(store)
	if err != nil || !ok {
		t.Fatalf("claim after release: %v %v", ok, err)
	}
	release()
}

// A store that is gone is not claimed, nor made again.
func TestClaimOfAMissingStoreCreatesNothing(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	if _, _, err := Claim(store); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("claim of a missing store: %v, want not exist", err)
	}
	if _, err := os.Stat(store); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the claim created the store: %v", err)
	}
}
