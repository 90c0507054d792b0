package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ckpt/ckpt/engine/internal/remotesync"
	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/engine/remote/crypt"
)

var (
	// ErrWrongKey: the key or passphrase given for an encrypted remote is
	// not the one it is encrypted with, or a remote is encrypted and no key
	// was given. Nothing was read from or written to the remote.
	ErrWrongKey = errors.New("wrong key or passphrase for the remote")
	// ErrRemoteChanged: a remote object was replaced while it was being
	// read. Nothing is damaged; the same call run again reads the new one.
	ErrRemoteChanged = errors.New("remote object replaced while being read")
)

// RemoteKey records how a remote is encrypted; the zero value means it is
// not. The store keeps a RemoteKey with the remote's URL and never the key
// or passphrase itself.
type RemoteKey struct {
	// KeyFile is the path of the file that holds the key
	// (GenerateRemoteKey writes one).
	KeyFile string `json:"key_file,omitempty"`
	// PassphraseEnv names the environment variable the host reads the
	// passphrase from at each use. The engine only records the name: the
	// host resolves it into a RemoteSecret.
	PassphraseEnv string `json:"passphrase_env,omitempty"`
}

// Encrypted reports whether k says the remote is encrypted.
func (k RemoteKey) Encrypted() bool { return k != RemoteKey{} }

// RemoteSecret is what opens an encrypted remote: the key in KeyFile, or
// Passphrase (stretched with argon2id and the remote's salt). Exactly one
// is set.
type RemoteSecret struct {
	KeyFile    string
	Passphrase []byte
}

// GenerateRemoteKey writes a new random 256-bit key to a new file at path,
// readable by its owner only (0600 on Unix). It never replaces a file:
// losing a key loses everything encrypted with it.
func GenerateRemoteKey(path string) error {
	return crypt.GenerateKeyFile(path)
}

// sealedBackend is a Backend that EncryptRemote returned: every object it
// stores is sealed, and key names the objects the sync layer makes.
type sealedBackend struct {
	Backend
	key *crypt.Key
}

// EncryptRemote returns b with everything stored through it encrypted and
// authenticated with XChaCha20-Poly1305 under the key secret gives, and
// named by keyed hashes when Push, Pull, Clone and RemoteGC use it, so that
// neither contents nor names tell anything without the key: not a file's
// content or name, not a task's name, not whether a guessed file is
// stored. Object sizes, their number and the times they are written stay
// visible. A remote takes its key from the first client that encrypts it;
// EncryptRemote checks the secret against that key before any checkpoint
// is read or written, and fails with ErrWrongKey for another; it fails
// with a *CorruptError when the remote's clear-text encryption parameters
// are damaged. It fails
// with ErrBadRequest for a secret that is empty, both kinds at once, or a
// key file that holds no key, and for a remote that holds unencrypted
// checkpoints already. Closing the returned Backend closes b.
func EncryptRemote(ctx context.Context, b Backend, secret RemoteSecret) (Backend, error) {
	k, err := secretKey(ctx, b, secret)
	if err != nil {
		return nil, keyError(err)
	}
	return &sealedBackend{Backend: crypt.Wrap(b, k), key: k}, nil
}

// secretKey loads or derives the key of secret and checks it against b.
func secretKey(ctx context.Context, b Backend, secret RemoteSecret) (*crypt.Key, error) {
	if (secret.KeyFile == "") == (len(secret.Passphrase) == 0) {
		return nil, fmt.Errorf("%w: give a key file or a passphrase, not both or neither", ErrBadRequest)
	}
	if err := refusePlaintext(ctx, b); err != nil {
		return nil, err
	}
	if len(secret.Passphrase) > 0 {
		return crypt.PassphraseKey(ctx, b, secret.Passphrase)
	}
	k, err := crypt.LoadKeyFile(secret.KeyFile)
	if err != nil {
		return nil, err
	}
	return k, crypt.CheckKey(ctx, b, k)
}

// refusePlaintext fails with ErrBadRequest when b is not encrypted yet but
// holds checkpoints: encrypting it now would mix sealed objects with
// plain ones that a keyed client cannot read.
func refusePlaintext(ctx context.Context, b Backend) error {
	if _, err := b.Stat(ctx, crypt.ParamsKey); err == nil || !errors.Is(err, remote.ErrNotFound) {
		return err
	}
	page, err := b.List(ctx, "heads/", "", 1)
	if err != nil {
		return err
	}
	if len(page.Objects) > 0 {
		return fmt.Errorf("%w: the remote holds unencrypted checkpoints; encrypt a new remote instead", ErrBadRequest)
	}
	return nil
}

// keyError turns the crypt package's key errors into the public ones.
func keyError(err error) error {
	switch {
	case errors.Is(err, crypt.ErrWrongKey):
		return &publicError{public: ErrWrongKey, err: fmt.Errorf("%w: it is encrypted with another one", ErrWrongKey)}
	case errors.Is(err, crypt.ErrBadKey):
		return &publicError{public: ErrBadRequest, err: err}
	case errors.Is(err, crypt.ErrAuth):
		// The encryption parameters are damaged or ask for too little work.
		return &CorruptError{Store: "remote", OnRemote: true, Err: err}
	}
	return err
}

// checkKeying fails unless b is sealed exactly when remote name is
// recorded as encrypted, and, for a plain b, unless the remote is plain
// too: an encrypted remote read without its key would look empty or
// damaged, and a plain push to it would store what it should hide.
func (e *Engine) checkKeying(ctx context.Context, name string, b Backend) error {
	r, err := e.remoteInfo(name)
	if err != nil {
		return err
	}
	return checkKeying(ctx, name, r.Key, b)
}

// checkKeying is Engine.checkKeying for a remote recorded with key.
func checkKeying(ctx context.Context, name string, key RemoteKey, b Backend) error {
	_, sealed := b.(*sealedBackend)
	switch {
	case sealed && !key.Encrypted():
		return fmt.Errorf("%w: remote %q is recorded as unencrypted but was given an encrypted backend", ErrBadRequest, name)
	case !sealed && key.Encrypted():
		return fmt.Errorf("%w: remote %q is encrypted and was given no key", ErrWrongKey, name)
	case sealed:
		return nil
	}
	if _, err := b.Stat(ctx, crypt.ParamsKey); err == nil {
		return fmt.Errorf("%w: remote %q is encrypted and was given no key", ErrWrongKey, name)
	} else if !errors.Is(err, remote.ErrNotFound) {
		return fmt.Errorf("remote %q: %w", name, err)
	}
	return nil
}

// namer is what names the objects of b for the sync layer: its key when
// EncryptRemote sealed it, else nil (plain BLAKE3).
func namer(b Backend) remotesync.Namer {
	if sb, ok := b.(*sealedBackend); ok {
		return sb.key
	}
	return nil
}

// remoteKeyKey is the store setting holding how remote name is encrypted
// (a RemoteKey as JSON), absent for a plain remote.
func remoteKeyKey(name string) string { return "remotekey/" + name }

// remoteInfo returns what the store records of remote name, or
// ErrBadRequest.
func (e *Engine) remoteInfo(name string) (RemoteInfo, error) {
	url, err := e.remoteURL(name)
	if err != nil {
		return RemoteInfo{}, err
	}
	r := RemoteInfo{Name: name, URL: url}
	v, ok, err := e.db.Config(remoteKeyKey(name))
	if err != nil {
		return r, err
	}
	if ok {
		if err := json.Unmarshal([]byte(v), &r.Key); err != nil {
			return r, &CorruptError{Store: e.storeDir, Err: fmt.Errorf("setting %s: %w", remoteKeyKey(name), err)}
		}
	}
	return r, nil
}

// cryptError marks the crypt package's failures met in a sync with remote
// name: a wrong key as ErrWrongKey, an object that fails to authenticate
// as a *CorruptError, and one replaced while being read as
// ErrRemoteChanged.
func cryptError(err error, name string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, crypt.ErrWrongKey):
		return keyError(err)
	case errors.Is(err, crypt.ErrChanged):
		return &publicError{public: ErrRemoteChanged, err: err}
	case errors.Is(err, crypt.ErrAuth):
		return &CorruptError{Store: "remote " + name, OnRemote: true, Err: err}
	}
	return nil
}
