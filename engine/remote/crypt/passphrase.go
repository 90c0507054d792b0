package crypt

import (
	"context"
	"crypto/rand"
	"fmt"

	"golang.org/x/crypto/argon2"

	"github.com/ckpt/ckpt/engine/internal/kdfcost"
	"github.com/ckpt/ckpt/engine/remote"
)

// kdfCost is argon2id's cost: passes over memory, memory in KiB, lanes.
type kdfCost struct {
	Time      uint32 `json:"time,omitempty"`
	MemoryKiB uint32 `json:"memory_kib,omitempty"`
	Threads   uint8  `json:"threads,omitempty"`
}

// defaultCost is RFC 9106's second recommended option: 3 passes over
// 64 MiB in 4 lanes (kdfcost.Passphrase, which only tests lower).
func defaultCost() kdfCost { return kdfCost(kdfcost.Passphrase) }

// maxCost bounds the cost a params object may ask for, so that a damaged
// or hostile one cannot make a client spin or run out of memory.
var maxCost = kdfCost{Time: 64, MemoryKiB: 4 << 20, Threads: 64}

const saltSize = 16

// PassphraseKey derives the key of remote b from passphrase with argon2id
// (3 passes, 64 MiB, 4 lanes, a 16-byte random salt). The salt and costs
// live in the clear in b's ParamsKey object: the first client to need them
// creates it with a conditional put, so clients racing on a new remote all
// end with the one salt that won, and every later client reads it. A wrong
// passphrase, or a remote encrypted with a key file, is an error wrapping
// ErrWrongKey; a params object that is malformed or asks for less work
// than the costs above is one wrapping ErrAuth. A process stretches a
// passphrase once per remote's params (derivedKeys): a later call on the
// same remote returns the same Key, checked again.
//
// b is the remote itself, not a Backend returned by Wrap.
func PassphraseKey(ctx context.Context, b remote.Backend, passphrase []byte) (*Key, error) {
	return passphraseKey(ctx, b, passphrase, defaultCost())
}

// passphraseKey is PassphraseKey with the cost it creates params with and
// the least it accepts from the remote.
func passphraseKey(ctx context.Context, b remote.Backend, passphrase []byte, cost kdfCost) (*Key, error) {
	if len(passphrase) == 0 {
		return nil, fmt.Errorf("crypt: empty passphrase")
	}
	p, err := agreeOnParams(ctx, b, func() (*params, error) {
		p := &params{Format: paramsFormat, KDF: kdfArgon2id, kdfCost: cost, Salt: make([]byte, saltSize)}
		rand.Read(p.Salt)
		k, err := newKey(p.derive(passphrase))
		if err != nil {
			return nil, err
		}
		p.Check = k.check
		derivedKeys.add(p, passphrase, k) // the params that win the race are these or another salt's
		return p, nil
	})
	if err != nil {
		return nil, err
	}
	if p.KDF == kdfNone && p.Format == paramsFormat {
		return nil, fmt.Errorf("crypt: the remote is encrypted with a key file, not a passphrase: %w", ErrWrongKey)
	}
	if err := p.validKDF(cost); err != nil {
		return nil, fmt.Errorf("crypt: %s: %w: %w", ParamsKey, ErrAuth, err)
	}
	k := derivedKeys.lookup(p, passphrase) // a hit is the most recently used already
	derived := k == nil
	if derived {
		if k, err = newKey(p.derive(passphrase)); err != nil {
			return nil, err
		}
	}
	if err := p.verify(k); err != nil {
		return nil, err
	}
	if derived {
		derivedKeys.add(p, passphrase, k)
	}
	return k, nil
}

// validKDF checks the argon2id params p, which must ask for at least
// least.
func (p *params) validKDF(least kdfCost) error {
	switch {
	case p.Format != paramsFormat:
		return fmt.Errorf("format %q, want %q", p.Format, paramsFormat)
	case p.KDF != kdfArgon2id:
		return fmt.Errorf("kdf %q, want %q", p.KDF, kdfArgon2id)
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
