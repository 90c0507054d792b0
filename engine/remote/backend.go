package remote

import (
	"context"
	"errors"
	"io"
	"time"
)

var (
	// ErrNotFound is wrapped by every error that reports a missing object.
	ErrNotFound = errors.New("remote: object not found")
	// ErrPrecondition is wrapped by the error of a conditional Put whose
	// condition did not hold: the object existed for IfAbsent, or was absent
	// or had another ETag for IfMatch. Nothing was written.
	ErrPrecondition = errors.New("remote: precondition failed")
	// ErrStalled is wrapped by the error of a read of an object that
	// received nothing for Config.ReadStall: the service, or the network
	// to it, stopped sending.
	ErrStalled = errors.New("remote: no bytes received")
	// ErrInvalidKey is wrapped by the error of any call given a key that
	// ValidKey rejects. Nothing was sent or written.
	ErrInvalidKey = errors.New("remote: invalid key")
)

// ObjectInfo describes one object as stored.
type ObjectInfo struct {
	Key  string
	Size int64
	// ETag is an opaque token of the object's content, what IfMatch
	// compares: puts of different content give different ETags. It names
	// content, not a version: putting the same bytes again may keep the
	// ETag (S3 and the file backend do), so a writer that needs to see
	// every replacement must make each version's bytes unique. Only
	// equality between ETags of one backend is meaningful.
	ETag string
	// Modified is when the object was last written, as the store sees it.
	Modified time.Time
}

// ListPage is one page of a listing, in ascending byte order of Key.
type ListPage struct {
	Objects []ObjectInfo
	// Next is the key to pass as after to fetch the next page, or "" when
	// this page is the last.
	Next string
}

// Backend is an object store. Every method is safe for concurrent use, by
// goroutines of one process and by several processes or machines sharing
// the store, and gives up with ctx's error once ctx is done.
//
// Guarantees every implementation keeps (package remotetest tests them):
//   - A Put is atomic: readers see either the previous object or the whole
//     new one, never a part; a Put that fails or is cancelled leaves the
//     previous object (or its absence) in place.
//   - Read after write: once Put returns, Get, GetRange, Stat and List
//     from any client see the new object; once Delete returns, they report
//     it gone.
//   - A conditional Put is a compare-and-swap: of N concurrent puts with
//     IfAbsent on one absent key exactly one succeeds; of N concurrent puts
//     with IfMatch(e) on an object whose ETag is e exactly one succeeds.
//     The others fail with an error wrapping ErrPrecondition.
//   - A missing object is an error wrapping ErrNotFound, from Get, GetRange
//     and Stat.
//   - A Put that fails with any other error may or may not have taken
//     effect (the response can be lost after the store committed), and a
//     client that retries a lost conditional Put sees its own write as a
//     failed precondition. A caller that must know reads the object back
//     and compares it with what it wrote.
type Backend interface {
	// Put stores exactly size bytes read from r under key, replacing any
	// object there unless cond says otherwise, and returns the new ETag.
	// If r ends before size bytes the Put fails with an error wrapping
	// io.ErrUnexpectedEOF and stores nothing.
	Put(ctx context.Context, key string, r io.Reader, size int64, cond Condition) (etag string, err error)
	// Get opens the whole object. The returned info and bytes belong to
	// the same version of it, even if it is replaced while being read.
	Get(ctx context.Context, key string) (io.ReadCloser, ObjectInfo, error)
	// GetRange opens the n bytes of the object that start at off. If the
	// object is shorter than off+n, the open or a later Read fails with an
	// error wrapping io.ErrUnexpectedEOF.
	GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error)
	// Stat describes the object without reading it.
	Stat(ctx context.Context, key string) (ObjectInfo, error)
	// List returns up to limit objects (limit ≤ 0 means the backend's page
	// size, at most 1000) whose key starts with prefix and sorts after
	// after ("" to start at the beginning), in ascending byte order.
	List(ctx context.Context, prefix, after string, limit int) (ListPage, error)
	// Delete removes the object. Deleting an absent key succeeds: a
	// Delete is idempotent, so a retried one is harmless.
	Delete(ctx context.Context, key string) error
	// Close releases what the backend holds (connections, files).
	Close() error
}

// Condition restricts a Put. The zero value puts unconditionally.
type Condition struct {
	kind conditionKind
	etag string
}

type conditionKind uint8

const (
	always conditionKind = iota
	ifAbsent
	ifMatch
)

// IfAbsent makes a Put create the object only if no object has its key
// (If-None-Match: * in HTTP).
func IfAbsent() Condition { return Condition{kind: ifAbsent} }

// IfMatch makes a Put replace the object only if its current ETag is etag
// (If-Match: etag in HTTP). An absent object matches no ETag.
func IfMatch(etag string) Condition { return Condition{kind: ifMatch, etag: etag} }

// String names c as the HTTP header that expresses it.
func (c Condition) String() string {
	switch c.kind {
	case ifAbsent:
		return "If-None-Match: *"
	case ifMatch:
		return "If-Match: " + c.etag
	default:
		return "unconditional"
	}
}
