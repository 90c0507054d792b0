package crypt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
)

// Two machines with the same passphrase derive the same key from the
// params the first one created; a wrong passphrase is refused at once.
func TestPassphraseKeysAgreeAcrossClientsAndRefuseAWrongPassphrase(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	first, second := openDir(t, dir), openDir(t, dir)
	k1, err := passphraseKey(ctx, first, []byte("correct horse"), cheapCost)
	if err != nil {
		t.Fatal(err)
	}
	data := plaintext(7, 3*segmentSize/2)
	putBytes(t, Wrap(first, k1), "obj", data)
	k2, err := passphraseKey(ctx, second, []byte("correct horse"), cheapCost)
	if err != nil {
		t.Fatal(err)
	}
	if got := getBytes(t, Wrap(second, k2), "obj"); !bytes.Equal(got, data) {
		t.Fatalf("the second client read other bytes")
	}
	if _, err := passphraseKey(ctx, second, []byte("battery staple"), cheapCost); !errors.Is(err, ErrWrongKey) || !errors.Is(err, ErrAuth) {
		t.Fatalf("wrong passphrase = %v, want ErrWrongKey and ErrAuth", err)
	}
	if err := CheckKey(ctx, second, k2); err != nil {
		t.Fatalf("CheckKey of the passphrase's key: %v", err)
	}
	if err := CheckKey(ctx, second, testKey(t)); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("CheckKey of another key on a passphrase remote = %v, want ErrWrongKey", err)
	}
	if _, err := passphraseKey(ctx, second, nil, cheapCost); err == nil {
		t.Fatalf("an empty passphrase was accepted")
	}
}

func TestPassphraseClientsRacingOnANewRemoteAgreeOnOneSalt(t *testing.T) {
	const clients = 6
	names := make([]string, clients)
	errs := raceClients(t, t.TempDir(), clients, func(i int, b remote.Backend) error {
		k, err := passphraseKey(context.Background(), b, []byte("correct horse"), cheapCost)
		if err == nil {
			names[i] = k.Name([]byte("x"))
		}
		return err
	})
	for i := range clients {
		if errs[i] != nil {
			t.Fatalf("client %d: %v", i, errs[i])
		}
		if names[i] != names[0] {
			t.Fatalf("clients 0 and %d derived different keys", i)
		}
	}
}

// A params object that is damaged, or that asks for less work than the
// client would have used, is refused before any key is derived from it.
func TestDamagedOrWeakParamsAreAnAuthenticationError(t *testing.T) {
	ctx := context.Background()
	good := func(t *testing.T) (remote.Backend, map[string]any) {
		raw := openDir(t, t.TempDir())
		if _, err := passphraseKey(ctx, raw, []byte("pw"), cheapCost); err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(getBytes(t, raw, ParamsKey), &doc); err != nil {
			t.Fatal(err)
		}
		return raw, doc
	}
	for _, tc := range []struct {
		name  string
		edit  func(doc map[string]any)
		least kdfCost
	}{
		{"WeakerThanDefault", func(map[string]any) {}, defaultCost()},
		{"CheaperTime", func(d map[string]any) { d["time"] = 0 }, cheapCost},
		{"TooMuchMemory", func(d map[string]any) { d["memory_kib"] = 1 << 30 }, cheapCost},
		{"OtherKDF", func(d map[string]any) { d["kdf"] = "scrypt" }, cheapCost},
		{"OtherFormat", func(d map[string]any) { d["format"] = "ckpt-crypt-9" }, cheapCost},
		{"ShortSalt", func(d map[string]any) { d["salt"] = "AAAA" }, cheapCost},
		{"NoCheck", func(d map[string]any) { delete(d, "check") }, cheapCost},
		{"OtherSalt", func(d map[string]any) { d["salt"] = "AAAAAAAAAAAAAAAAAAAAAA==" }, cheapCost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, doc := good(t)
			tc.edit(doc)
			data, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			putBytes(t, raw, ParamsKey, data)
			if _, err := passphraseKey(ctx, raw, []byte("pw"), tc.least); !errors.Is(err, ErrAuth) {
				t.Fatalf("passphraseKey = %v, want ErrAuth", err)
			}
		})
	}
	raw, _ := good(t)
	putBytes(t, raw, ParamsKey, []byte("{not json"))
	if _, err := passphraseKey(ctx, raw, []byte("pw"), cheapCost); !errors.Is(err, ErrAuth) {
		t.Fatalf("passphraseKey with garbage params = %v, want ErrAuth", err)
	}
}

func TestWrappedBackendKeepsOffTheParamsObject(t *testing.T) {
	ctx := context.Background()
	raw := openDir(t, t.TempDir())
	k, err := passphraseKey(ctx, raw, []byte("pw"), cheapCost)
	if err != nil {
		t.Fatal(err)
	}
	b := Wrap(raw, k)
	before := getBytes(t, raw, ParamsKey)
	if _, err := b.Put(ctx, ParamsKey, bytes.NewReader(nil), 0, remote.Condition{}); !errors.Is(err, remote.ErrInvalidKey) {
		t.Fatalf("Put(%s) = %v, want ErrInvalidKey", ParamsKey, err)
	}
	if err := b.Delete(ctx, ParamsKey); !errors.Is(err, remote.ErrInvalidKey) {
		t.Fatalf("Delete(%s) = %v, want ErrInvalidKey", ParamsKey, err)
	}
	if _, _, err := b.Get(ctx, ParamsKey); !errors.Is(err, remote.ErrInvalidKey) {
		t.Fatalf("Get(%s) = %v, want ErrInvalidKey", ParamsKey, err)
	}
	if _, err := b.Stat(ctx, ParamsKey); !errors.Is(err, remote.ErrInvalidKey) {
		t.Fatalf("Stat(%s) = %v, want ErrInvalidKey", ParamsKey, err)
	}
	if after := getBytes(t, raw, ParamsKey); !bytes.Equal(after, before) {
		t.Fatalf("the params object changed")
	}
	for _, key := range []string{"crypt/a", "crypt/q", "d"} {
		putBytes(t, b, key, []byte(key))
	}
	var listed []string
	for after := ""; ; {
		page, err := b.List(ctx, "crypt/", after, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Objects) != 1 {
			t.Fatalf("List(crypt/, after %q, 1) = %+v", after, page)
		}
		listed = append(listed, page.Objects[0].Key)
		if after = page.Next; after == "" {
			break
		}
	}
	if len(listed) != 2 || listed[0] != "crypt/a" || listed[1] != "crypt/q" {
		t.Fatalf("listed %q, want crypt/a and crypt/q", listed)
	}
}
