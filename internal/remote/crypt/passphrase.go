package crypt

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/argon2"

	"github.com/ckpt/ckpt/internal/remote"
)

// ParamsKey is the key of the one object an encrypted remote keeps in the
// clear: the salt and argon2id costs of its passphrase (see PassphraseKey).
// A Backend returned by Wrap refuses it and leaves it out of listings.
const ParamsKey = "crypt/params"

// kdfCost is argon2id's cost: passes over memory, memory in KiB, lanes.
type kdfCost struct {
	Time      uint32 `json:"time"`
	MemoryKiB uint32 `json:"memory_kib"`
	Threads   uint8  `json:"threads"`
}

// defaultCost is RFC 9106's second recommended option: 3 passes over
// 64 MiB in 4 lanes.
var defaultCost = kdfCost{Time: 3, MemoryKiB: 64 << 10, Threads: 4}

// maxCost bounds the cost a params object may ask for, so that a damaged
// or hostile one cannot make a client spin or run out of memory.
var maxCost = kdfCost{Time: 64, MemoryKiB: 4 << 20, Threads: 64}

// params is the content of the ParamsKey object, as JSON.
type params struct {
	Format string `json:"format"`
	KDF    string `json:"kdf"`
	kdfCost
	Salt []byte `json:"salt"`
	// Check is an HKDF sub-key of the derived secret that tells a wrong
	// passphrase apart at once. It tells an attacker nothing that a sealed
	// object would not: either lets them test a guess.
	Check []byte `json:"check"`
}

const (
	paramsFormat = "ckpt-crypt-1"
	paramsKDF    = "argon2id"
	saltSize     = 16
	maxParams    = 4 << 10
)

// PassphraseKey derives the key of remote b from passphrase with argon2id
// (3 passes, 64 MiB, 4 lanes, a 16-byte random salt). The salt and costs
// live in the clear in b's ParamsKey object: the first client to need them
// creates it with a conditional put, so clients racing on a new remote all
// end with the one salt that won, and every later client reads it. A wrong
// passphrase is an error wrapping ErrAuth, as is a params object that is
// malformed or asks for less work than the costs above.
//
// b is the remote itself, not a Backend returned by Wrap.
func PassphraseKey(ctx context.Context, b remote.Backend, passphrase []byte) (*Key, error) {
	return passphraseKey(ctx, b, passphrase, defaultCost)
}

// passphraseKey is PassphraseKey with the cost it creates params with and
// the least it accepts from the remote.
func passphraseKey(ctx context.Context, b remote.Backend, passphrase []byte, cost kdfCost) (*Key, error) {
	if len(passphrase) == 0 {
		return nil, fmt.Errorf("crypt: empty passphrase")
	}
	// A lost race to create the params leaves them for the next read; only a
	// concurrent delete could make that read miss again.
	for range 3 {
		p, err := readParams(ctx, b)
		if errors.Is(err, remote.ErrNotFound) {
			k, err := createParams(ctx, b, passphrase, cost)
			if errors.Is(err, remote.ErrPrecondition) {
				continue
			}
			return k, err
		}
		if err != nil {
			return nil, err
		}
		return p.key(passphrase, cost)
	}
	return nil, fmt.Errorf("crypt: %s was created and deleted again while being read", ParamsKey)
}

func createParams(ctx context.Context, b remote.Backend, passphrase []byte, cost kdfCost) (*Key, error) {
	p := params{Format: paramsFormat, KDF: paramsKDF, kdfCost: cost, Salt: make([]byte, saltSize)}
	rand.Read(p.Salt)
	secret := p.derive(passphrase)
	p.Check = subkey(secret, infoCheck)
	data, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("crypt: %w", err)
	}
	if _, err := b.Put(ctx, ParamsKey, bytes.NewReader(data), int64(len(data)), remote.IfAbsent()); err != nil {
		return nil, fmt.Errorf("crypt: create %s: %w", ParamsKey, err)
	}
	return newKey(secret)
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
	var p params
	if len(data) > maxParams {
		return nil, fmt.Errorf("crypt: %s: over %d bytes: %w", ParamsKey, maxParams, ErrAuth)
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("crypt: %s: %w: %w", ParamsKey, ErrAuth, err)
	}
	return &p, nil
}

// key checks p, derives the key from passphrase and checks it.
func (p *params) key(passphrase []byte, least kdfCost) (*Key, error) {
	if err := p.valid(least); err != nil {
		return nil, fmt.Errorf("crypt: %s: %w: %w", ParamsKey, ErrAuth, err)
	}
	secret := p.derive(passphrase)
	if subtle.ConstantTimeCompare(subkey(secret, infoCheck), p.Check) != 1 {
		return nil, fmt.Errorf("crypt: wrong passphrase: %w", ErrAuth)
	}
	return newKey(secret)
}

func (p *params) valid(least kdfCost) error {
	switch {
	case p.Format != paramsFormat:
		return fmt.Errorf("format %q, want %q", p.Format, paramsFormat)
	case p.KDF != paramsKDF:
		return fmt.Errorf("kdf %q, want %q", p.KDF, paramsKDF)
	case p.Time < least.Time || p.MemoryKiB < least.MemoryKiB || p.Threads < least.Threads:
		return fmt.Errorf("cost %+v below the least accepted, %+v", p.kdfCost, least)
	case p.Time > maxCost.Time || p.MemoryKiB > maxCost.MemoryKiB || p.Threads > maxCost.Threads:
		return fmt.Errorf("cost %+v above the most accepted, %+v", p.kdfCost, maxCost)
	case p.MemoryKiB < 8*uint32(p.Threads):
		return fmt.Errorf("cost %+v: under 8 KiB per lane", p.kdfCost)
	case len(p.Salt) < saltSize || len(p.Salt) > 64:
		return fmt.Errorf("salt of %d bytes", len(p.Salt))
	case len(p.Check) != KeySize:
		return fmt.Errorf("check of %d bytes", len(p.Check))
	}
	return nil
}

func (p *params) derive(passphrase []byte) []byte {
	return argon2.IDKey(passphrase, p.Salt, p.Time, p.MemoryKiB, p.Threads, KeySize)
}
