package crypt

import (
	"bytes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"github.com/zeebo/blake3"
	"golang.org/x/crypto/chacha20poly1305"
)

// KeySize is the length in bytes of a key file's secret.
const KeySize = 32

// ErrBadKey is wrapped by the error of ParseKey or LoadKeyFile given bytes
// that are not a key.
var ErrBadKey = errors.New("crypt: not a key")

// Key is the secret of an encrypted remote, and the sub-keys derived from
// it with HKDF-SHA256: one that seals object bodies, one that names
// objects, and a check value that ParamsKey records so that a wrong key is
// told apart from damage. A Key is safe for concurrent use.
type Key struct {
	aead  cipher.AEAD
	names *blake3.Hasher // keyed, never written: Name clones it
	check []byte         // what ParamsKey records of the key
}

// The HKDF info strings of the sub-keys. Changing one changes every key.
const (
	infoContent = "ckpt crypt v1 content"
	infoNames   = "ckpt crypt v1 names"
	infoCheck   = "ckpt crypt v1 check"
)

// newKey derives a Key from a 32-byte secret.
func newKey(secret []byte) (*Key, error) {
	content := subkey(secret, infoContent)
	aead, err := chacha20poly1305.NewX(content)
	if err != nil {
		return nil, fmt.Errorf("crypt: %w", err)
	}
	names, err := blake3.NewKeyed(subkey(secret, infoNames))
	if err != nil {
		return nil, fmt.Errorf("crypt: %w", err)
	}
	return &Key{aead: aead, names: names, check: subkey(secret, infoCheck)}, nil
}

// subkey is the 32-byte HKDF-SHA256 key of secret for one purpose.
func subkey(secret []byte, info string) []byte {
	k, err := hkdf.Key(sha256.New, secret, nil, info, KeySize)
	if err != nil {
		// hkdf.Key fails only for lengths over 255 hash sizes.
		panic(err)
	}
	return k
}

// Name is a keyed BLAKE3-256 hash of data in hex, 64 characters: a valid
// remote key segment that is the same for everyone holding the key and
// reveals nothing about data to anyone else (not even whether two names
// under different keys hash the same data). Callers name objects by it so
// that names, like bodies, leak nothing without the key.
func (k *Key) Name(data []byte) string {
	h := k.names.Clone()
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// ParseKey reads the key in data: KeySize raw bytes, or their 2*KeySize
// hex digits with optional surrounding white space (what GenerateKeyFile
// writes).
func ParseKey(data []byte) (*Key, error) {
	if len(data) == KeySize {
		return newKey(data)
	}
	text := bytes.TrimSpace(data)
	if len(text) != 2*KeySize {
		return nil, fmt.Errorf("%w: %d bytes, want %d raw or %d hex digits", ErrBadKey, len(data), KeySize, 2*KeySize)
	}
	secret := make([]byte, KeySize)
	if _, err := hex.Decode(secret, text); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadKey, err)
	}
	return newKey(secret)
}

// LoadKeyFile reads the key in the file at path (see ParseKey).
func LoadKeyFile(path string) (*Key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("crypt: %w", err)
	}
	k, err := ParseKey(data)
	if err != nil {
		return nil, fmt.Errorf("crypt: key file %s: %w", path, err)
	}
	return k, nil
}

// GenerateKeyFile writes a new random key to a new file at path, as hex
// digits and a newline, readable and writable by its owner only (0600 on
// Unix), synced to disk. It never replaces an existing file: losing a key
// loses every object sealed with it.
func GenerateKeyFile(path string) (err error) {
	secret := make([]byte, KeySize)
	rand.Read(secret)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("crypt: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("crypt: %w", cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	if _, err := f.WriteString(hex.EncodeToString(secret) + "\n"); err != nil {
		return fmt.Errorf("crypt: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("crypt: %w", err)
	}
	return nil
}
