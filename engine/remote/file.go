package remote

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/zeebo/blake3"

	"github.com/ckpt/ckpt/internal/osfs"
)

// Each object file starts with a header: the magic below, then the 32-byte
// BLAKE3-256 hash of the content that follows. The ETag is that hash in
// hex, so Stat and List read 40 bytes instead of the whole object.
const (
	fileMagic      = "ckptobj\x01"
	fileHeaderSize = len(fileMagic) + 32
)

// ErrDamaged is wrapped by the error of a read that finds an object file of
// the file backend without a valid header (truncated, or not written by it).
var ErrDamaged = errors.New("remote: damaged object file")

// fileBackend is the Backend of a file:// remote.
type fileBackend struct {
	root  string
	tmp   string
	locks *keyLocks

	mu    sync.Mutex
	ready bool // root, ~tmp and ~locks exist
}

// OpenDir opens the directory root as a Backend. A missing root is
// created, with its missing parents, by the first write, as an S3 prefix
// needs no creation; until then reads find no object. OpenDir fails only
// when root exists and is not a directory, or cannot be looked at.
func OpenDir(root string) (Backend, error) {
	st, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("remote: open %s: %w", root, err)
	case !st.IsDir():
		return nil, fmt.Errorf("remote: open %s: not a directory", root)
	}
	return &fileBackend{
		root:  root,
		tmp:   filepath.Join(root, "~tmp"),
		locks: &keyLocks{dir: filepath.Join(root, "~locks")},
	}, nil
}

// prepare creates the root and the ~tmp and ~locks directories a write
// uses inside it, once.
func (b *fileBackend) prepare() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ready {
		return nil
	}
	for _, dir := range []string{b.tmp, b.locks.dir} {
		if err := mkdirs(dir); err != nil {
			return fmt.Errorf("remote: open %s: %w", b.root, err)
		}
	}
	b.ready = true
	return nil
}

func (b *fileBackend) Close() error { return nil }

func (b *fileBackend) Put(ctx context.Context, key string, r io.Reader, size int64, cond Condition) (string, error) {
	if err := validPut(key, size); err != nil {
		return "", err
	}
	if err := b.prepare(); err != nil {
		return "", err
	}
	tmp, etag, err := b.writeTemp(ctx, r, size)
	if err != nil {
		return "", fmt.Errorf("remote: put %s: %w", key, err)
	}
	defer os.Remove(tmp) // fails harmlessly once renamed
	unlock, err := b.locks.lock(ctx, key)
	if err != nil {
		return "", err
	}
	defer unlock()
	path := keyPath(b.root, key)
	if err := b.check(path, cond); err != nil {
		return "", fmt.Errorf("remote: put %s (%v): %w", key, cond, err)
	}
	if err := mkdirs(filepath.Dir(path)); err != nil {
		return "", fmt.Errorf("remote: put %s: %w", key, err)
	}
	if err := b.replace(tmp, path); err != nil {
		return "", fmt.Errorf("remote: put %s: %w", key, err)
	}
	if err := osfs.SyncDir(filepath.Dir(path)); err != nil {
		return "", fmt.Errorf("remote: put %s: %w", key, err)
	}
	return etag, nil
}

// writeTemp writes the object file for size bytes of r to a new file in
// ~tmp, durably, and returns its path and the content's ETag.
func (b *fileBackend) writeTemp(ctx context.Context, r io.Reader, size int64) (path, etag string, err error) {
	f, err := os.CreateTemp(b.tmp, "put-*")
	if err != nil {
		return "", "", err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(make([]byte, fileHeaderSize)); err != nil {
		return "", "", err
	}
	h := blake3.New()
	n, err := io.CopyN(io.MultiWriter(f, h), ctxReader{ctx, r}, size)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w: read %d of %d bytes", io.ErrUnexpectedEOF, n, size)
		}
		return "", "", err
	}
	sum := h.Sum(nil)
	if _, err := f.WriteAt(append([]byte(fileMagic), sum...), 0); err != nil {
		return "", "", err
	}
	if err := osfs.DataSync(f); err != nil {
		return "", "", err
	}
	return f.Name(), hex.EncodeToString(sum), nil
}

// replace renames the file tmp over path, both inside the root. os.Root's
// rename asks Windows for POSIX semantics, so a reader holding the old
// object open (osfs.OpenShared) keeps its version and does not refuse the
// rename; where the file system lacks them (FAT, older Windows, Wine) a
// reader's handle is waited out briefly.
func (b *fileBackend) replace(tmp, path string) error {
	root, err := os.OpenRoot(b.root)
	if err != nil {
		return err
	}
	defer root.Close()
	from, err := filepath.Rel(b.root, tmp)
	if err != nil {
		return err
	}
	to, err := filepath.Rel(b.root, path)
	if err != nil {
		return err
	}
	return osfs.RetrySharing(func() error { return root.Rename(from, to) })
}

// check reports ErrPrecondition when the object at path defeats cond. The
// caller holds the key's lock.
func (b *fileBackend) check(path string, cond Condition) error {
	switch cond.kind {
	case ifAbsent:
		_, err := os.Lstat(path)
		if err == nil {
			return ErrPrecondition
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	case ifMatch:
		f, err := osfs.OpenShared(path)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: no object", ErrPrecondition)
		}
		if err != nil {
			return err
		}
		defer f.Close()
		etag, err := readHeader(f)
		if err != nil {
			return err
		}
		if etag != cond.etag {
			return fmt.Errorf("%w: ETag is %s", ErrPrecondition, etag)
		}
	}
	return nil
}

// mkdirs creates dir and its missing parents, syncing each parent that
// gains an entry so the new path survives a crash.
func mkdirs(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirs(parent); err != nil {
			return err
		}
	}
	err := os.Mkdir(dir, 0o700)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return osfs.SyncDir(parent)
}

func (b *fileBackend) Get(ctx context.Context, key string) (io.ReadCloser, ObjectInfo, error) {
	f, info, err := b.open(ctx, key)
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	r := io.NewSectionReader(f, int64(fileHeaderSize), info.Size)
	return fileReader{ctxReader{ctx, r}, f}, info, nil
}

func (b *fileBackend) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if off < 0 || n < 0 {
		return nil, fmt.Errorf("remote: get %s: invalid range %d+%d", key, off, n)
	}
	f, info, err := b.open(ctx, key)
	if err != nil {
		return nil, err
	}
	if off+n > info.Size {
		f.Close()
		return nil, fmt.Errorf("remote: get %s bytes %d+%d of %d: %w", key, off, n, info.Size, io.ErrUnexpectedEOF)
	}
	r := io.NewSectionReader(f, int64(fileHeaderSize)+off, n)
	return fileReader{ctxReader{ctx, r}, f}, nil
}

func (b *fileBackend) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	f, info, err := b.open(ctx, key)
	if err != nil {
		return ObjectInfo{}, err
	}
	f.Close()
	return info, nil
}

// open opens key's object file and describes it.
func (b *fileBackend) open(ctx context.Context, key string) (*os.File, ObjectInfo, error) {
	if err := ValidKey(key); err != nil {
		return nil, ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, ObjectInfo{}, err
	}
	f, err := osfs.OpenShared(keyPath(b.root, key))
	if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
		return nil, ObjectInfo{}, fmt.Errorf("remote: %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, ObjectInfo{}, fmt.Errorf("remote: %w", err)
	}
	info, err := describe(f, key)
	if err != nil {
		f.Close()
		return nil, ObjectInfo{}, err
	}
	return f, info, nil
}

// describe reads the header and size of the object file f, open for key.
func describe(f *os.File, key string) (ObjectInfo, error) {
	st, err := f.Stat()
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("remote: %w", err)
	}
	if st.IsDir() {
		return ObjectInfo{}, fmt.Errorf("remote: %s: %w", key, ErrNotFound)
	}
	etag, err := readHeader(f)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("remote: %s: %w", key, err)
	}
	return ObjectInfo{Key: key, Size: st.Size() - int64(fileHeaderSize), ETag: etag, Modified: st.ModTime()}, nil
}

func readHeader(f *os.File) (etag string, err error) {
	var hdr [fileHeaderSize]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		if errors.Is(err, io.EOF) {
			return "", fmt.Errorf("%w: short header", ErrDamaged)
		}
		return "", err
	}
	if !bytes.Equal(hdr[:len(fileMagic)], []byte(fileMagic)) {
		return "", fmt.Errorf("%w: bad magic", ErrDamaged)
	}
	return hex.EncodeToString(hdr[len(fileMagic):]), nil
}

func (b *fileBackend) Delete(ctx context.Context, key string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	if _, err := os.Stat(b.root); errors.Is(err, fs.ErrNotExist) {
		return nil // nothing was ever written
	}
	if err := b.prepare(); err != nil {
		return err
	}
	unlock, err := b.locks.lock(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	path := keyPath(b.root, key)
	err = osfs.RetrySharing(func() error { return os.Remove(path) })
	if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remote: delete %s: %w", key, err)
	}
	if err := osfs.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("remote: delete %s: %w", key, err)
	}
	return nil
}

// ctxReader fails reads with ctx's error once ctx is done, so a long copy
// stops between buffers.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

type fileReader struct {
	io.Reader
	f *os.File
}

func (r fileReader) Close() error { return r.f.Close() }

// isNotDir reports a path that runs through a file, which for a key means
// that no object has it.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }
