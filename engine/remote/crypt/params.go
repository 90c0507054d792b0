package crypt

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/ckpt/ckpt/engine/remote"
)

// ParamsKey is the key of the one object an encrypted remote keeps in the
// clear: which kind of key it is encrypted with (a key file, or a
// passphrase with the salt and argon2id costs that turn it into a key)
// and a check value that tells a wrong key apart. A Backend returned by
// Wrap refuses it and leaves it out of listings.
const ParamsKey = "crypt/params"

// ErrWrongKey is wrapped by the error of CheckKey or PassphraseKey given a
// key or passphrase other than the one the remote is encrypted with. It
// wraps ErrAuth.
var ErrWrongKey = fmt.Errorf("crypt: wrong key or passphrase: %w", ErrAuth)

// params is the content of the ParamsKey object, as JSON.
type params struct {
	Format string `json:"format"`
	KDF    string `json:"kdf"` // kdfArgon2id, or kdfNone for a key file
	kdfCost
	Salt []byte `json:"salt,omitempty"`
	// Check is an HKDF sub-key of the secret. It tells an attacker nothing
	// that a sealed object would not: either lets them test a guess.
	Check []byte `json:"check"`
}

const (
	paramsFormat = "ckpt-crypt-1"
	kdfArgon2id  = "argon2id"
	kdfNone      = "none"
	maxParams    = 4 << 10
)

// CheckKey checks that k is the key remote b is encrypted with, and makes
// it so if b has no ParamsKey object yet: it then creates one holding k's
// check value with a conditional put, so of clients racing with different
// keys on a new remote exactly one wins and the others get ErrWrongKey.
// Callers check a key file's key once before they Wrap; PassphraseKey
// checks its own. b is the remote itself, not a Backend returned by Wrap.
func CheckKey(ctx context.Context, b remote.Backend, k *Key) error {
	p, err := agreeOnParams(ctx, b, func() (*params, error) {
		return &params{Format: paramsFormat, KDF: kdfNone, Check: k.check}, nil
	})
	if err != nil {
		return err
	}
	if p.Format != paramsFormat || len(p.Check) != KeySize {
		return fmt.Errorf("crypt: %s: format %q, check of %d bytes: %w", ParamsKey, p.Format, len(p.Check), ErrAuth)
	}
	return p.verify(k)
}

// verify reports ErrWrongKey unless k has p's check value.
func (p *params) verify(k *Key) error {
	if subtle.ConstantTimeCompare(k.check, p.Check) != 1 {
		return ErrWrongKey
	}
	return nil
}

// agreeOnParams returns b's params, creating them from fresh when b has
// none. Clients racing to create them all end with the ones that won.
func agreeOnParams(ctx context.Context, b remote.Backend, fresh func() (*params, error)) (*params, error) {
	// A lost race leaves the winner's params for the next read; only a
	// concurrent delete could make that read miss again.
	for range 3 {
		p, err := readParams(ctx, b)
		if !errors.Is(err, remote.ErrNotFound) {
			return p, err
		}
		if p, err = fresh(); err != nil {
			return nil, err
		}
		err = putParams(ctx, b, p)
		if !errors.Is(err, remote.ErrPrecondition) {
			return p, err
		}
	}
	return nil, fmt.Errorf("crypt: %s was created and deleted again while being read", ParamsKey)
}

func putParams(ctx context.Context, b remote.Backend, p *params) error {
	data, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("crypt: %w", err)
	}
	if _, err := b.Put(ctx, ParamsKey, bytes.NewReader(data), int64(len(data)), remote.IfAbsent()); err != nil {
		return fmt.Errorf("crypt: create %s: %w", ParamsKey, err)
	}
	return nil
}

func readParams(ctx context.Context, b remote.Backend) (*params, error) {
	rc, _, err := b.Get(ctx, ParamsKey)
	if err != nil {
		return nil, fmt.Errorf("crypt: read %s: %w", ParamsKey, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxParams+1))
	if err != nil {
		return nil, fmt.Errorf("crypt: read %s: %w", ParamsKey, err)
	}
	if len(data) > maxParams {
		return nil, fmt.Errorf("crypt: %s: over %d bytes: %w", ParamsKey, maxParams, ErrAuth)
	}
	var p params
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("crypt: %s: %w: %w", ParamsKey, ErrAuth, err)
	}
	return &p, nil
}
