package crypt

import (
	"crypto/rand"
	"encoding/binary"
	"slices"
	"sync"

	"github.com/zeebo/blake3"
)

// maxCachedKeys bounds how many passphrase keys a process remembers.
const maxCachedKeys = 8

// derivedKeys remembers the keys this process stretched from passphrases,
// so that a process that opens an encrypted remote again and again (a
// server opens it for every push, pull and fetch it runs) pays for
// argon2id (64 MiB and every core for a fraction of a second) once per
// passphrase and remote's params, not per call. Only keys a remote's
// check value accepted are kept, and a key found here is checked against
// the params read at each call like a derived one, so a remote whose
// params changed (even keeping the salt) gets no key they do not check.
var derivedKeys = newKeyCache()

// keyCache is a small most-recently-used set of passphrase keys. An entry
// is named by a hash keyed with a secret random per process, over the
// params' salt and costs and the passphrase: the cache holds no
// passphrase, and no hash of one that could be tested against guesses
// without that secret.
type keyCache struct {
	mu      sync.Mutex
	hasher  *blake3.Hasher // keyed with the process's secret, never written: id clones it
	entries []cachedKey    // the most recently used last
}

type cachedKey struct {
	id  [32]byte
	key *Key
}

func newKeyCache() *keyCache {
	var secret [32]byte
	rand.Read(secret[:])
	h, err := blake3.NewKeyed(secret[:])
	if err != nil {
		// NewKeyed fails only for a key that is not 32 bytes.
		panic(err)
	}
	return &keyCache{hasher: h}
}

// id names the key passphrase stretches to under p's salt and costs.
func (c *keyCache) id(p *params, passphrase []byte) [32]byte {
	h := c.hasher.Clone()
	var costs [4 + 4 + 1 + 8]byte
	binary.LittleEndian.PutUint32(costs[0:], p.Time)
	binary.LittleEndian.PutUint32(costs[4:], p.MemoryKiB)
	costs[8] = p.Threads
	binary.LittleEndian.PutUint64(costs[9:], uint64(len(p.Salt)))
	h.Write(costs[:])
	h.Write(p.Salt)
	h.Write(passphrase)
	var id [32]byte
	h.Sum(id[:0])
	return id
}

// lookup returns the key remembered for passphrase under p, or nil.
func (c *keyCache) lookup(p *params, passphrase []byte) *Key {
	id := c.id(p, passphrase)
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.IndexFunc(c.entries, func(e cachedKey) bool { return e.id == id })
	if i < 0 {
		return nil
	}
	e := c.entries[i]
	c.entries = append(slices.Delete(c.entries, i, i+1), e)
	return e.key
}

// add remembers k as passphrase's key under p, forgetting the least
// recently used key beyond maxCachedKeys.
func (c *keyCache) add(p *params, passphrase []byte, k *Key) {
	id := c.id(p, passphrase)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = slices.DeleteFunc(c.entries, func(e cachedKey) bool { return e.id == id })
	if len(c.entries) == maxCachedKeys {
		c.entries = slices.Delete(c.entries, 0, 1)
	}
	c.entries = append(c.entries, cachedKey{id: id, key: k})
}
