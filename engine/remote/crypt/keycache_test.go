package crypt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

// A process stretches a passphrase once per remote's params: a later call
// returns the key it derived, a call with another passphrase or on a
// remote with another salt derives its own, and a remembered key is still
// checked against the params read at the call.
func TestPassphraseKeyIsDerivedOncePerParams(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	first, err := passphraseKey(ctx, openDir(t, dir), []byte("correct horse"), cheapCost)
	if err != nil {
		t.Fatal(err)
	}
	again, err := passphraseKey(ctx, openDir(t, dir), []byte("correct horse"), cheapCost)
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Fatalf("the second call on the same remote derived the key again")
	}
	if _, err := passphraseKey(ctx, openDir(t, dir), []byte("correct horsf"), cheapCost); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("another passphrase after a remembered one = %v, want ErrWrongKey", err)
	}

	other, err := passphraseKey(ctx, openDir(t, t.TempDir()), []byte("correct horse"), cheapCost)
	if err != nil {
		t.Fatal(err)
	}
	if other == first || other.Name([]byte("x")) == first.Name([]byte("x")) {
		t.Fatalf("a remote with another salt got the first remote's key")
	}

	// The remote's check value replaced, salt and costs kept: the key
	// remembered for them is refused like a derived one.
	raw := openDir(t, dir)
	var doc map[string]any
	if err := json.Unmarshal(getBytes(t, raw, ParamsKey), &doc); err != nil {
		t.Fatal(err)
	}
	doc["check"] = make([]byte, KeySize)
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	putBytes(t, raw, ParamsKey, data)
	if k, err := passphraseKey(ctx, raw, []byte("correct horse"), cheapCost); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("a remembered key against another check value = %v, %v; want ErrWrongKey", k, err)
	}
}

// The cache keeps the maxCachedKeys most recently used keys: a key used
// again stays, the least recently used one goes.
func TestKeyCacheForgetsTheLeastRecentlyUsedKey(t *testing.T) {
	c := newKeyCache()
	p := func(i int) *params {
		return &params{kdfCost: cheapCost, Salt: []byte(fmt.Sprintf("salt %12d", i))}
	}
	pass := []byte("pw")
	keys := make([]*Key, maxCachedKeys+1)
	for i := range keys {
		keys[i] = testKey(t)
	}
	for i := range maxCachedKeys {
		c.add(p(i), pass, keys[i])
	}
	if c.lookup(p(0), pass) != keys[0] {
		t.Fatalf("key 0 is not remembered")
	}
	c.add(p(maxCachedKeys), pass, keys[maxCachedKeys])
	if c.lookup(p(1), pass) != nil {
		t.Fatalf("key 1, the least recently used, is still remembered")
	}
	for _, i := range []int{0, 2, maxCachedKeys} {
		if c.lookup(p(i), pass) != keys[i] {
			t.Fatalf("key %d is not remembered", i)
		}
	}
	if c.lookup(p(0), []byte("pW")) != nil {
		t.Fatalf("another passphrase found key 0")
	}
	costlier := p(0)
	costlier.Time++
	if c.lookup(costlier, pass) != nil {
		t.Fatalf("other costs found key 0")
	}
}
