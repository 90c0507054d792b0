package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ckpt/ckpt/engine/internal/remotesync"
	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/index"
)

// Backend is an object store that checkpoints are pushed to and pulled
// from: a file:// directory or an s3:// bucket (engine/remote opens
// them). Its guarantees (atomic puts, conditional puts as compare-and-swap,
// read after write) are what keep a remote consistent.
type Backend = remote.Backend

// ErrDiverged: a pull found that the remote's task and the store's both
// saved checkpoints since they last synced: a sequence number names
// different checkpoints here and there (the error says which). Nothing
// was imported; a push keeps this store's side as a new task instead.
var ErrDiverged = errors.New("task forked")

// RemoteInfo is one named remote of the store.
type RemoteInfo struct {
	Name string
	URL  string
	// Key says how the remote is encrypted; zero when it is not.
	Key RemoteKey
}

// remoteKey is the store setting holding the URL of remote name.
func remoteKey(name string) string { return "remote/" + name }

// validRemoteName accepts names made of letters, digits, '-', '_' and '.'.
func validRemoteName(name string) error {
	if name == "" || len(name) > 64 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != "" {
		return fmt.Errorf("%w: remote name %q: use 1-64 letters, digits, '-', '_' or '.'", ErrBadRequest, name)
	}
	return nil
}

// AddRemote records remote name with its URL in the store. It fails with
// ErrBadRequest for an invalid name or a name already taken. Only the URL
// is stored: credentials are never written to the store.
func (e *Engine) AddRemote(ctx context.Context, name, url string) error {
	return translate(e.addRemote(ctx, RemoteInfo{Name: name, URL: url}), e.storeDir)
}

// AddEncryptedRemote is AddRemote for a remote encrypted as key says (see
// EncryptRemote). The store records key (a key file's path, a variable's
// name), never a key or passphrase; Push, Pull and RemoteGC then accept
// only a Backend that EncryptRemote returned for this remote. It fails
// with ErrBadRequest when key is zero.
func (e *Engine) AddEncryptedRemote(ctx context.Context, name, url string, key RemoteKey) error {
	if !key.Encrypted() {
		return translate(fmt.Errorf("%w: remote %q: no key file or passphrase variable given", ErrBadRequest, name), e.storeDir)
	}
	return translate(e.addRemote(ctx, RemoteInfo{Name: name, URL: url, Key: key}), e.storeDir)
}

func (e *Engine) addRemote(ctx context.Context, r RemoteInfo) error {
	return e.writeSettings(ctx, func(b *index.Batch) error { return e.recordRemote(b, r) })
}

// writeSettings runs fn under the write lock (unless ctx is done) and
// commits the settings it adds to b, unless it fails.
func (e *Engine) writeSettings(ctx context.Context, fn func(b *index.Batch) error) error {
	unlock, err := e.lockForWrite()
	if err != nil {
		return err
	}
	defer unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	b := e.db.NewBatch()
	defer b.Close()
	if err := fn(b); err != nil {
		return err
	}
	return b.Commit()
}

// recordRemote adds the settings that record remote r to b, after
// checking its name and URL and that the name is free. The caller holds
// the write lock.
func (e *Engine) recordRemote(b *index.Batch, r RemoteInfo) error {
	if err := validRemoteName(r.Name); err != nil {
		return err
	}
	if r.URL == "" {
		return fmt.Errorf("%w: empty remote URL", ErrBadRequest)
	}
	if old, ok, err := e.db.Config(remoteKey(r.Name)); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("%w: remote %q exists already (%s)", ErrBadRequest, r.Name, old)
	}
	b.SetConfig(remoteKey(r.Name), r.URL)
	if r.Key.Encrypted() {
		k, err := json.Marshal(r.Key)
		if err != nil {
			return err
		}
		b.SetConfig(remoteKeyKey(r.Name), string(k))
	}
	return nil
}

// RemoveRemote forgets remote name and what the store recorded about it.
// Nothing on the remote is touched. Blobs a pull left on that remote and
// never fetched become unreadable here, so RemoveRemote fails with
// ErrBadRequest while the store still needs some, unless force is set.
func (e *Engine) RemoveRemote(ctx context.Context, name string, force bool) error {
	return translate(e.removeRemote(ctx, name, force), e.storeDir)
}

func (e *Engine) removeRemote(ctx context.Context, name string, force bool) error {
	unlock, err := e.lockForWrite()
	if err != nil {
		return err
	}
	defer unlock()
	if _, ok, err := e.db.Config(remoteKey(name)); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("%w: no remote %q", ErrBadRequest, name)
	}
	if !force {
		n, err := e.remoteOnly(ctx, name)
		if err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w: %d blob(s) of this store's checkpoints are only on remote %q", ErrBadRequest, n, name)
		}
	}
	b := e.db.NewBatch()
	defer b.Close()
	b.DeleteConfig(remoteKey(name))
	b.DeleteConfig(remoteKeyKey(name))
	err = e.db.EachConfig(remotesync.RecordPrefix(name), func(key, _ string) error {
		b.DeleteConfig(key)
		return nil
	})
	if err != nil {
		return err
	}
	return b.Commit()
}

// Remotes lists the store's remotes by name.
func (e *Engine) Remotes(ctx context.Context) ([]RemoteInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	names, err := e.remoteNames()
	if err != nil {
		return nil, translate(err, e.storeDir)
	}
	out := make([]RemoteInfo, 0, len(names))
	for _, name := range names {
		r, err := e.remoteInfo(name)
		if err != nil {
			return nil, translate(err, e.storeDir)
		}
		out = append(out, r)
	}
	return out, nil
}

// remoteURL returns the URL of remote name, or ErrBadRequest.
func (e *Engine) remoteURL(name string) (string, error) {
	url, ok, err := e.db.Config(remoteKey(name))
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("%w: no remote %q", ErrBadRequest, name)
	}
	return url, nil
}

// syncer returns the mechanics of remote name over backend b.
func (e *Engine) syncer(name string, b Backend, progress func(SyncProgress)) *remotesync.Syncer {
	s := &remotesync.Syncer{DB: e.db, Blobs: e.blobs, Backend: b, Name: name, ObjectSize: e.opts.hooks.syncObjectSize, KeepEvery: e.opts.hooks.fetchKeepEvery, Names: namer(b)}
	if progress != nil {
		s.Progress = func(p remotesync.Progress) { progress(SyncProgress(p)) }
	}
	return s
}

// remoteError marks a remote's integrity failures (an object that does not
// verify, a damaged object file) as a *CorruptError naming the remote, a missing task as ErrUnknownRef, a fork as
// ErrDiverged, and an encrypted remote's failures as cryptError does.
func remoteError(err error, name string) error {
	if cerr := cryptError(err, name); cerr != nil {
		return cerr
	}
	var ce *remotesync.CorruptError
	switch {
	case errors.As(err, &ce), errors.Is(err, remote.ErrDamaged):
		return &CorruptError{Store: "remote " + name, OnRemote: true, Err: err}
	case errors.Is(err, remotesync.ErrNoTask):
		return &publicError{public: ErrUnknownRef, err: err}
	case errors.Is(err, remotesync.ErrDiverged):
		return &publicError{public: ErrDiverged, err: err}
	}
	return err
}
