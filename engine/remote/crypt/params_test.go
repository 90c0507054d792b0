package crypt

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
)

func TestCheckKeyRecordsTheFirstKeyAndRefusesOthers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	first, second := openDir(t, dir), openDir(t, dir)
	k := testKey(t)
	if err := CheckKey(ctx, first, k); err != nil {
		t.Fatalf("CheckKey on a new remote: %v", err)
	}
	var p map[string]any
	if err := json.Unmarshal(getBytes(t, first, ParamsKey), &p); err != nil {
		t.Fatal(err)
	}
	if p["kdf"] != kdfNone || p["salt"] != nil {
		t.Fatalf("params of a key-file remote = %v", p)
	}
	if err := CheckKey(ctx, second, k); err != nil {
		t.Fatalf("CheckKey of the same key from another client: %v", err)
	}
	if err := CheckKey(ctx, second, testKey(t)); !errors.Is(err, ErrWrongKey) || !errors.Is(err, ErrAuth) {
		t.Fatalf("CheckKey of another key = %v, want ErrWrongKey and ErrAuth", err)
	}
	if _, err := passphraseKey(ctx, second, []byte("pw"), cheapCost); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("passphrase on a key-file remote = %v, want ErrWrongKey", err)
	}
	putBytes(t, first, ParamsKey, []byte(`{"format":"ckpt-crypt-1","kdf":"none","check":"AAAA"}`))
	if err := CheckKey(ctx, second, k); !errors.Is(err, ErrAuth) || errors.Is(err, ErrWrongKey) {
		t.Fatalf("CheckKey against a damaged check = %v, want ErrAuth only", err)
	}
}

// raceClients runs fn for clients clients at once, each with its own
// backend on dir, and returns their errors.
func raceClients(t *testing.T, dir string, clients int, fn func(i int, b remote.Backend) error) []error {
	errs := make([]error, clients)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range clients {
		b := openDir(t, dir)
		wg.Go(func() {
			<-start
			errs[i] = fn(i, b)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

func TestClientsRacingWithDifferentKeysOnANewRemoteHaveOneWinner(t *testing.T) {
	keys := []*Key{testKey(t), testKey(t), testKey(t), testKey(t), testKey(t), testKey(t)}
	errs := raceClients(t, t.TempDir(), len(keys), func(i int, b remote.Backend) error {
		return CheckKey(context.Background(), b, keys[i])
	})
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrWrongKey):
			t.Fatalf("client %d: %v, want ErrWrongKey", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d clients' keys were accepted", won)
	}
}
