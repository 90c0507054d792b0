package crypt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ckpt/ckpt/engine/remote"
)

// ErrAuth is wrapped by every error that reports stored bytes that do not
// authenticate under the key: a damaged, truncated, reordered or swapped
// object, an object sealed with another key, a wrong key or passphrase
// (ErrWrongKey). A caller never receives bytes that failed to
// authenticate.
var ErrAuth = errors.New("crypt: authentication failed (damaged object or wrong key)")

// ErrChanged is wrapped by the error of a ranged read whose object was
// replaced or deleted between the requests the read is made of (see Wrap;
// a deleted one is remote.ErrNotFound too); reading again reads the new
// object.
var ErrChanged = errors.New("crypt: object replaced while being read")

// backend seals every object of inner under key.
type backend struct {
	inner remote.Backend
	key   *Key
	l     layout
}

// Wrap returns a Backend that stores every object of b sealed under k
// (the format is in the package documentation) and keeps every guarantee
// of remote.Backend, in plaintext terms:
//   - Sizes (Stat, List, Get's info) and GetRange's offsets count
//     plaintext bytes. Stat and List derive them from the stored sizes
//     without reading the objects, so they are not authenticated: a
//     stored size that no sealed object has makes Stat fail with ErrAuth
//     and List report a Size of -1; reads authenticate everything.
//   - ETags are b's ETags of the stored bytes, so IfMatch works as on b.
//     Every Put seals with fresh random nonces, so putting the same
//     plaintext twice gives two ETags.
//   - Put streams: it holds one 64 KiB segment, never the object.
//   - GetRange reads only the segments that cover the range, after a Stat
//     and, unless the range starts in the first segment, a read of the
//     32-byte header: three requests where b makes one. So a ranged read
//     can meet two versions of an object replaced meanwhile; it then fails
//     with ErrChanged (not ErrAuth) and yields no byte of the mix. Ranged
//     reads suit objects that never change once written.
//
// ParamsKey belongs to CheckKey and PassphraseKey: the Backend refuses
// it with remote.ErrInvalidKey and leaves it out of listings. Closing the
// Backend closes b.
func Wrap(b remote.Backend, k *Key) remote.Backend {
	return wrap(b, k, layout{seg: segmentSize})
}

func wrap(b remote.Backend, k *Key, l layout) *backend {
	return &backend{inner: b, key: k, l: l}
}

func reserved(key string) error {
	if key == ParamsKey {
		return fmt.Errorf("%w %q: reserved for the encryption parameters", remote.ErrInvalidKey, key)
	}
	return nil
}

func (b *backend) Put(ctx context.Context, key string, r io.Reader, size int64, cond remote.Condition) (string, error) {
	if err := reserved(key); err != nil {
		return "", err
	}
	if size < 0 || size > maxSize {
		return "", fmt.Errorf("crypt: put %s: size %d out of range", key, size)
	}
	s := newSealer(b.key.aead, b.l, key, r, size)
	etag, err := b.inner.Put(ctx, key, s, b.l.sealedSize(size), cond)
	if err != nil && s.failed != nil {
		// r failed (or ended early): say so, whatever inner made of it.
		return "", fmt.Errorf("crypt: put %s: %w", key, s.failed)
	}
	return etag, err
}

func (b *backend) Get(ctx context.Context, key string) (io.ReadCloser, remote.ObjectInfo, error) {
	if err := reserved(key); err != nil {
		return nil, remote.ObjectInfo{}, err
	}
	rc, info, err := b.inner.Get(ctx, key)
	if err != nil {
		return nil, remote.ObjectInfo{}, err
	}
	size, err := b.plainSize(key, info.Size)
	if err != nil {
		rc.Close()
		return nil, remote.ObjectInfo{}, err
	}
	// Get is one request, so its errors need no explaining.
	o, err := b.open(ctx, key, rc, nil, size, span{0, size}, func(err error) error { return err })
	if err != nil {
		return nil, remote.ObjectInfo{}, err
	}
	info.Size = size
	return o, info, nil
}

func (b *backend) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if off < 0 || n < 0 {
		return nil, fmt.Errorf("crypt: get %s: invalid range %d+%d", key, off, n)
	}
	info, err := b.Stat(ctx, key)
	if err != nil {
		return nil, err
	}
	if off > info.Size || n > info.Size-off {
		return nil, fmt.Errorf("crypt: get %s bytes %d+%d of %d: %w", key, off, n, info.Size, io.ErrUnexpectedEOF)
	}
	if n == 0 {
		return io.NopCloser(bytes.NewReader(nil)), nil
	}
	first, last := off/b.l.seg, (off+n-1)/b.l.seg
	start, end := b.l.offset(first), b.l.offset(last)+b.l.plainLen(last, info.Size)+segmentOverhead
	explain := func(err error) error { return b.explain(ctx, key, info.ETag, err) }
	var header []byte
	if first == 0 {
		start = 0 // the header comes with the first segment
	} else if header, err = b.readHeader(ctx, key); err != nil {
		return nil, explain(err)
	}
	rc, err := b.inner.GetRange(ctx, key, start, end-start)
	if err != nil {
		return nil, explain(err)
	}
	return b.open(ctx, key, rc, header, info.Size, span{off, n}, explain)
}

// explain turns err, met in reading the object at key after a Stat that
// gave etag, into an error wrapping ErrChanged if the object is no longer
// that version (and also remote.ErrNotFound if it is gone): then the read
// met another version, not a damaged one.
func (b *backend) explain(ctx context.Context, key, etag string, err error) error {
	if !errors.Is(err, ErrAuth) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, remote.ErrNotFound) {
		return err
	}
	now, serr := b.inner.Stat(ctx, key)
	switch {
	case errors.Is(serr, remote.ErrNotFound):
		return fmt.Errorf("crypt: %s: %w: %w", key, ErrChanged, serr)
	case serr != nil || now.ETag == etag:
		return err
	}
	return fmt.Errorf("crypt: %s: %w", key, ErrChanged)
}

// open returns the opener of s, primed, with explain to account for its
// errors. It reads the header from the start of rc when
// header is nil. It closes rc if it fails.
func (b *backend) open(ctx context.Context, key string, rc io.ReadCloser, header []byte, size int64, s span, explain func(error) error) (*opener, error) {
	if header == nil {
		var err error
		if header, err = readHeader(rc, key); err != nil {
			rc.Close()
			return nil, explain(err)
		}
	}
	o := newOpener(ctx, b.key, b.l, key, rc, header, size, s)
	o.explain = explain
	if err := o.prime(); err != nil {
		rc.Close()
		return nil, err
	}
	return o, nil
}

// readHeader reads the header of the object at key alone.
func (b *backend) readHeader(ctx context.Context, key string) ([]byte, error) {
	rc, err := b.inner.GetRange(ctx, key, 0, int64(headerSize))
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return readHeader(rc, key)
}

func (b *backend) Stat(ctx context.Context, key string) (remote.ObjectInfo, error) {
	if err := reserved(key); err != nil {
		return remote.ObjectInfo{}, err
	}
	info, err := b.inner.Stat(ctx, key)
	if err != nil {
		return remote.ObjectInfo{}, err
	}
	if info.Size, err = b.plainSize(key, info.Size); err != nil {
		return remote.ObjectInfo{}, err
	}
	return info, nil
}

// plainSize is the plaintext size of the object at key stored in sealed
// bytes.
func (b *backend) plainSize(key string, sealed int64) (int64, error) {
	size, ok := b.l.plainSize(sealed)
	if !ok {
		return 0, fmt.Errorf("crypt: %s: %d bytes is no sealed object's size: %w", key, sealed, ErrAuth)
	}
	return size, nil
}

func (b *backend) List(ctx context.Context, prefix, after string, limit int) (remote.ListPage, error) {
	ask := limit
	if limit > 0 {
		ask++ // so that a page is full even when ParamsKey is left out
	}
	page, err := b.inner.List(ctx, prefix, after, ask)
	if err != nil {
		return remote.ListPage{}, err
	}
	objs := make([]remote.ObjectInfo, 0, len(page.Objects))
	for _, o := range page.Objects {
		if o.Key == ParamsKey {
			continue
		}
		size, ok := b.l.plainSize(o.Size)
		if !ok {
			size = -1
		}
		o.Size = size
		objs = append(objs, o)
	}
	next := page.Next
	if limit > 0 && len(objs) > limit {
		objs = objs[:limit]
		next = objs[limit-1].Key
	}
	return remote.ListPage{Objects: objs, Next: next}, nil
}

func (b *backend) Delete(ctx context.Context, key string) error {
	if err := reserved(key); err != nil {
		return err
	}
	return b.inner.Delete(ctx, key)
}

func (b *backend) Close() error { return b.inner.Close() }
