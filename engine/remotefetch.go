package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ckpt/ckpt/diffview"
	"github.com/ckpt/ckpt/engine/internal/maint"
	"github.com/ckpt/ckpt/engine/internal/remotesync"
	"github.com/ckpt/ckpt/objects"
)

// FetchedBlobs counts what a restore fetched from remotes: blobs a pull
// had left there.
type FetchedBlobs struct {
	Blobs    int
	Bytes    int64
	Requests int64
}

// handedBackend is the backend of one remote that a call of an Engine
// hands the fetches it makes, with the progress report they give: a
// Clone's, for the restore that follows its pull.
type handedBackend struct {
	e        *Engine
	name     string
	b        Backend
	progress func(SyncProgress)
}

// handedKey is the context key of a handedBackend.
type handedKey struct{}

// handing returns ctx carrying b as the backend of remote name for the
// fetches e makes in the call ctx belongs to; they report to progress,
// when set.
func (e *Engine) handing(ctx context.Context, name string, b Backend, progress func(SyncProgress)) context.Context {
	return context.WithValue(ctx, handedKey{}, &handedBackend{e: e, name: name, b: b, progress: progress})
}

// backend returns the backend of remote name for one fetch of the call
// ctx belongs to, and the release the fetch calls when it ends: the
// backend the call handed (handing), else one Options.OpenRemote opens
// now with ctx, which the release closes. No backend serves a later
// call: each call reaches the remote with what its ctx gives OpenRemote
// (a server running commands for clients with other credentials).
func (e *Engine) backend(ctx context.Context, name string) (Backend, func() error, error) {
	if h := e.handed(ctx); h != nil && h.name == name {
		return h.b, func() error { return nil }, nil
	}
	if e.opts.OpenRemote == nil {
		return nil, nil, fmt.Errorf("blobs are on remote %q, which this engine cannot open: %w", name, objects.ErrNotFound)
	}
	r, err := e.remoteInfo(name)
	if err != nil {
		return nil, nil, err
	}
	b, err := e.opts.OpenRemote(ctx, r)
	if err != nil {
		return nil, nil, fmt.Errorf("open remote %q: %w", name, err)
	}
	return b, b.Close, nil
}

// handed returns what the call ctx belongs to handed e, or nil.
func (e *Engine) handed(ctx context.Context) *handedBackend {
	if h, ok := ctx.Value(handedKey{}).(*handedBackend); ok && h.e == e {
		return h
	}
	return nil
}

// remoteNames lists the store's remotes.
func (e *Engine) remoteNames() ([]string, error) {
	var names []string
	err := e.db.EachConfig("remote/", func(key, _ string) error {
		names = append(names, strings.TrimPrefix(key, "remote/"))
		return nil
	})
	return names, err
}

// fetchBlobs copies into the store those of ids that it lacks and a remote
// holds; with into set, it hands their contents to into instead (a
// read-only Engine). Ids no remote holds are left for the reader to report.
func (e *Engine) fetchBlobs(ctx context.Context, ids []objects.ID, into func(objects.ID, []byte) error) (FetchedBlobs, error) {
	return e.fetchLocating(ctx, ids, into, nil)
}

// fetchLocating is fetchBlobs telling held, when set, where the store
// holds those of ids it held already, as the lookup that finds what it
// lacks reads them (none when the store has no remote).
func (e *Engine) fetchLocating(ctx context.Context, ids []objects.ID, into func(objects.ID, []byte) error, held func(objects.ID, objects.Locator)) (FetchedBlobs, error) {
	var got FetchedBlobs
	names, err := e.remoteNames()
	if err != nil || len(names) == 0 {
		return got, err
	}
	for _, name := range names {
		if len(ids) == 0 {
			break
		}
		s := e.syncer(name, nil, nil)
		mine, rest, err := s.Wanted(ids, held)
		held = nil // the next remotes are asked only about blobs the store lacks
		if err != nil {
			return got, err
		}
		ids = rest // for the next remote
		if mine.Len() == 0 {
			continue
		}
		release, err := e.connectFetch(ctx, s)
		if err != nil {
			return got, err
		}
		var r remotesync.FetchResult
		if into != nil {
			r, err = s.FetchInto(ctx, mine, into)
		} else {
			r, err = s.Fetch(ctx, mine)
		}
		err = errors.Join(err, release())
		got.add(r)
		if err != nil {
			return got, fetchError(err, name)
		}
	}
	return got, nil
}

// connectFetch gives s, a syncer of one of the store's remotes, its
// backend (Engine.backend) and the progress report of the call ctx
// belongs to, for one fetch; the fetch calls release when it ends.
func (e *Engine) connectFetch(ctx context.Context, s *remotesync.Syncer) (release func() error, err error) {
	b, release, err := e.backend(ctx, s.Name)
	if err != nil {
		return nil, err
	}
	s.Backend = b
	if h := e.handed(ctx); h != nil && h.progress != nil {
		s.Progress = func(sp remotesync.Progress) { h.progress(SyncProgress(sp)) }
	}
	return release, nil
}

// add counts r in f.
func (f *FetchedBlobs) add(r remotesync.FetchResult) {
	f.Blobs += r.Blobs
	f.Bytes += r.Bytes
	f.Requests += int64(r.Requests)
}

// fetchError is the error of a fetch from remote name.
func fetchError(err error, name string) error {
	return remoteError(fmt.Errorf("fetch from %s: %w", name, err), name)
}

// openBlob opens blob id, fetching it first from a remote that holds it
// when the store lacks it.
func (e *Engine) openBlob(ctx context.Context, id objects.ID) (io.ReadCloser, int64, error) {
	rc, n, err := e.blobs.Open(id)
	if errors.Is(err, objects.ErrNotFound) && e.opts.ReadOnly {
		b, ferr := e.getBlob(ctx, id)
		if ferr != nil {
			return nil, 0, ferr
		}
		return io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
	}
	if errors.Is(err, objects.ErrNotFound) {
		if _, ferr := e.fetchBlobs(ctx, []objects.ID{id}, nil); ferr != nil {
			return nil, 0, ferr
		}
		rc, n, err = e.blobs.Open(id)
	}
	return rc, n, err
}

// getBlob is openBlob for a whole blob in memory. A read-only Engine
// fetches into memory and stores nothing.
func (e *Engine) getBlob(ctx context.Context, id objects.ID) ([]byte, error) {
	b, err := e.blobs.Get(id)
	if !errors.Is(err, objects.ErrNotFound) {
		return b, err
	}
	var into func(objects.ID, []byte) error
	got := false
	if e.opts.ReadOnly {
		into = func(_ objects.ID, content []byte) error { b, got = content, true; return nil }
	}
	if _, ferr := e.fetchBlobs(ctx, []objects.ID{id}, into); ferr != nil {
		return nil, ferr
	}
	if got {
		return b, nil
	}
	b, err = e.blobs.Get(id)
	return b, err
}

// remoteOnly counts the blobs the store knows only by remote name's record.
func (e *Engine) remoteOnly(ctx context.Context, name string) (int, error) {
	n := 0
	prefix := "sync/" + name + "/b/"
	err := e.db.EachConfig(prefix, func(key, _ string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		raw := strings.TrimPrefix(key, prefix)
		if len(raw) != objects.IDSize {
			return nil
		}
		_, found, err := e.db.Locator(objects.ID([]byte(raw)))
		if err == nil && !found {
			n++
		}
		return err
	})
	return n, err
}

// onRemote reports whether some remote holds blob id, so that its absence
// from the store is not damage.
func (e *Engine) onRemote(id objects.ID) bool {
	names, err := e.remoteNames()
	if err != nil {
		return false
	}
	for _, name := range names {
		if has, err := e.syncer(name, nil, nil).Has(id); err == nil && has {
			return true
		}
	}
	return false
}

// leftOnRemote reports whether p is a blob missing from the store that a
// pull left on a remote: not damage, as a fetch brings it when needed.
func (e *Engine) leftOnRemote(p maint.Problem) bool {
	return strings.HasSuffix(p.Message, " missing") && p.Kind != "tree" && p.Kind != "checkpoint" && e.onRemote(p.Object)
}

// changedBlobs lists the blobs of the stored sides of changes.
func changedBlobs(changes []diffview.Change) []objects.ID {
	var ids []objects.ID
	for _, c := range changes {
		for _, side := range []*diffview.Side{c.Before, c.After} {
			if side != nil && side.Kind != objects.KindDir {
				ids = append(ids, side.ID)
			}
		}
	}
	return ids
}
