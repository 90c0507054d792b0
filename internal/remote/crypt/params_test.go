package crypt

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
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

func TestClientsRacingWithDifferentKeysOnANewRemoteHaveOneWinner(t *testing.T) {
	dir := t.TempDir()
	const clients = 6
	errs := make([]error, clients)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range clients {
		b, k := openDir(t, dir), testKey(t)
		wg.Go(func() {
			<-start
			errs[i] = CheckKey(context.Background(), b, k)
		})
	}
	close(start)
	wg.Wait()
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
