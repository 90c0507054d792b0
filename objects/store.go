package objects

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ckpt/ckpt/internal/storefs"
	"github.com/ckpt/ckpt/objects/internal/pack"
)

// Options tune a Store. The zero value selects the defaults.
type Options struct {
	// Level selects the zstd level: 0 or 1 = SpeedFastest (default),
	// 2 = SpeedDefault, 3 = SpeedBetterCompression, 4 = SpeedBestCompression.
	Level int
	// PackSize is the soft cap of a pack file in bytes (default 128 MiB): a
	// writer starts a new pack once its pack reaches it.
	PackSize int64
	// ChunkThreshold is the content length above which a blob is split into
	// content-defined chunks (default 4 MiB, at most 64 MiB).
	ChunkThreshold int64
	// Writers bounds the pack files one Batch writes at once (default
	// runtime.GOMAXPROCS(0)).
	Writers int
	// RecompressLevel is the zstd level (as Level) Rewrite compresses
	// regrouped and recompressed blobs with: collections and the
	// recompression of deferred packs run in the background of a save, so
	// they can afford more than the save's level. 0 means 4
	// (SpeedBestCompression).
	RecompressLevel int

	// FS is the file system the packs live on (nil: the real one,
	// storefs.OS); every read and write of a pack goes through it.
	FS vfs.FS
	// Groups stores blobs of up to 1 MiB in group records: 15%
	// smaller stores on real source code at the same save speed. Off, every
	// blob has a record of its own. A reader reads both kinds whatever the
	// setting. Callers that account bytes per blob must count a group's
	// record once (its members share Offset and Length); Rewrite's
	// MoveCopy copies a group whole, dead members included, and its
	// MoveRegroup moves live members into new groups.
	Groups bool
}

const (
	defaultPackSize       = 128 << 20
	defaultChunkThreshold = 4 << 20
	packsDir              = "packs"
	packExt               = ".pack"
	maxOpenPacks          = 128
	// defaultRecompressLevel: on the pinned module corpus, groups at
	// SpeedBetterCompression store 15% less than at SpeedFastest, and at
	// SpeedBestCompression 5.6% less again (the first save's packs: 198.6
	// MiB against 210.4), for 2.4 times the CPU time of work that runs
	// idle at the lowest priority (37 s against 15.5) and 50 MiB more
	// peak RSS while it runs (its encoder's tables; see ReleaseRecompression).
	// zstd decodes the smaller frames no slower (bench/README.md).
	defaultRecompressLevel = 4
)

func (o Options) withDefaults() (Options, error) {
	if o.PackSize <= 0 {
		o.PackSize = defaultPackSize
	}
	if o.ChunkThreshold <= 0 {
		o.ChunkThreshold = defaultChunkThreshold
	}
	if o.ChunkThreshold > maxBlobSize {
		return o, fmt.Errorf("chunk threshold %d above the maximum %d", o.ChunkThreshold, maxBlobSize)
	}
	if o.Writers <= 0 {
		o.Writers = runtime.GOMAXPROCS(0)
	}
	if o.RecompressLevel <= 0 {
		o.RecompressLevel = defaultRecompressLevel
	}
	o.FS = storefs.Or(o.FS)
	return o, nil
}

// Store is a content-addressed blob store of append-only pack files under
// dir/packs. Reads go through the LocatorIndex; writes go through Batches.
// A Store is safe for concurrent use. One process should own a store
// directory at a time (the engine holds a file lock).
type Store struct {
	dir   string
	idx   LocatorIndex
	opts  Options
	codec *codec
	// recodec compresses what a rewriter regroups or recompresses, at
	// Options.RecompressLevel.
	recodec *codec

	headBufs  sync.Pool // *[]byte of headBufLen bytes (or ChunkThreshold+1 when smaller)
	midBufs   sync.Pool // *[]byte of midBufLen bytes (or ChunkThreshold+1 when smaller)
	smallBufs sync.Pool // *[]byte of ChunkThreshold+1 bytes
	packBufs  sync.Pool // *[]byte scratch for compressed payloads
	groupBufs sync.Pool // *[]byte for group contents and payloads
	// chunkBufs holds the chunk windows (2*chunkMax bytes, made on first
	// use; nil until then) of the large files being split: a quarter of
	// the cores, at least one, split files at once, and a window is kept
	// for the next large file rather than left to the collector.
	chunkBufs chan *[]byte
	groups    groupCache
	deltas    *memo[deltaKey] // records prepared ahead of the Batch that writes them
	recent    *memo[ID]       // both versions of the files last stored as deltas (recent.go)
	// writeback is how a pack writer starts the device writing what it
	// appended (storefs.StartWriteback; a test's recorder).
	writeback func(f vfs.File, off, n int64)

	mu struct {
		sync.Mutex
		packs  map[uint32]*packState
		next   uint32
		open   map[uint32]*packHandle
		closed bool
	}
}

// packState is what the Store knows about one pack for choosing where a
// writer appends.
type packState struct {
	size   int64 // bytes on disk (clean end when clean is set)
	clean  bool  // size is known to end on a record boundary
	held   bool  // a live writer holds the pack
	sealed bool  // damaged, or of an older format version: never append to it
}

// Open opens (creating if needed) the store in dir. dir/packs is created
// with mode 0700; pack files are created 0600.
func Open(dir string, idx LocatorIndex, opts Options) (*Store, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	c, err := newCodec(opts.Level)
	if err != nil {
		return nil, err
	}
	rc, err := newCodec(opts.RecompressLevel)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: filepath.Join(dir, packsDir), idx: idx, opts: opts, codec: c, recodec: rc,
		deltas: newMemo[deltaKey](deltaMemoEntries, deltaMemoBytes), recent: newMemo[ID](recentEntries, recentBytes),
		chunkBufs: make(chan *[]byte, max(1, runtime.GOMAXPROCS(0)/4)), writeback: storefs.StartWriteback}
	for range cap(s.chunkBufs) {
		s.chunkBufs <- nil
	}
	if err := storefs.MkdirAll(opts.FS, s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s.mu.packs = make(map[uint32]*packState)
	s.mu.open = make(map[uint32]*packHandle)
	packs, err := s.Packs()
	if err != nil {
		return nil, err
	}
	for _, n := range packs {
		fi, err := s.opts.FS.Stat(s.PackPath(n))
		if err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		s.mu.packs[n] = &packState{size: fi.Size()}
		s.mu.next = n + 1
	}
	return s, nil
}

// Close releases the pack files the Store keeps open for reading. Batches
// must be closed first. Close is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.closed = true
	var errs []error
	for n, h := range s.mu.open {
		delete(s.mu.open, n)
		h.evicted = true
		if h.refs == 0 {
			errs = append(errs, h.f.Close())
		}
	}
	return errors.Join(errs...)
}

// PackPath returns the path of pack n: dir/packs/NNNNNNNN.pack with n in
// eight lowercase hex digits.
func (s *Store) PackPath(n uint32) string {
	return filepath.Join(s.dir, fmt.Sprintf("%08x%s", n, packExt))
}

// FS returns the file system the packs live on (Options.FS).
func (s *Store) FS() vfs.FS { return s.opts.FS }

// Packs lists the pack numbers on disk, ascending. Other files are ignored.
func (s *Store) Packs() ([]uint32, error) {
	names, err := s.opts.FS.List(s.dir)
	if err != nil {
		return nil, fmt.Errorf("list packs: %w", err)
	}
	var packs []uint32
	for _, name := range names {
		if n, ok := packNumber(name, packExt); ok {
			if fi, err := s.opts.FS.Stat(s.PackPath(n)); err == nil && fi.Mode().IsRegular() {
				packs = append(packs, n)
			}
		}
	}
	slices.Sort(packs)
	return packs, nil
}

// PackFile is a pack on disk as a collection weighs it.
type PackFile struct {
	Size int64 // bytes on disk
	// Start is the offset of the pack's first record: a pack holding no
	// record is Start bytes long, and no locator points below it.
	Start int64
}

// PackFiles returns every pack on disk by number, and the numbers in
// ascending order.
func (s *Store) PackFiles() (map[uint32]PackFile, []uint32, error) {
	nums, err := s.Packs()
	if err != nil {
		return nil, nil, err
	}
	files := make(map[uint32]PackFile, len(nums))
	for _, n := range nums {
		fi, err := s.opts.FS.Stat(s.PackPath(n))
		if err != nil {
			return nil, nil, fmt.Errorf("pack size: %w", err)
		}
		files[n] = PackFile{Size: fi.Size(), Start: int64(pack.HeaderLen)}
	}
	return files, nums, nil
}

// packNumber parses a file name of the packs directory: NNNNNNNN then ext,
// NNNNNNNN being 8 lowercase hex digits.
func packNumber(name, ext string) (uint32, bool) {
	hex, ok := strings.CutSuffix(name, ext)
	if !ok || len(hex) != 8 {
		return 0, false
	}
	n, err := strconv.ParseUint(hex, 16, 32)
	if err != nil || hex != fmt.Sprintf("%08x", n) {
		return 0, false
	}
	return uint32(n), true
}

// packHandle is a pack file open for reading, shared by concurrent readers.
type packHandle struct {
	n       uint32
	version uint32 // pack format version
	f       vfs.File
	refs    int
	evicted bool
}

// openPack returns a read handle on pack n, which the caller must release.
// A missing pack, or one whose header is not that of a version this package
// reads, is a *CorruptError: a committed locator points to it.
func (s *Store) openPack(n uint32, off int64) (*packHandle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return nil, errors.New("store closed")
	}
	if h := s.mu.open[n]; h != nil {
		h.refs++
		return h, nil
	}
	f, err := s.opts.FS.Open(s.PackPath(n))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &CorruptError{Pack: s.PackPath(n), Offset: off, Reason: "pack file missing"}
	}
	if err != nil {
		return nil, err
	}
	version, err := readPackVersion(f, s.PackPath(n))
	if err != nil {
		f.Close()
		return nil, err
	}
	if len(s.mu.open) >= maxOpenPacks {
		s.evictIdleLocked()
	}
	h := &packHandle{n: n, f: f, refs: 1, version: version}
	s.mu.open[n] = h
	return h, nil
}

// evictIdleLocked closes the cached handles nobody is reading through.
func (s *Store) evictIdleLocked() {
	for n, h := range s.mu.open {
		if h.refs == 0 {
			delete(s.mu.open, n)
			h.f.Close()
		}
	}
}

// releasePack drops a reference taken by openPack.
func (s *Store) releasePack(h *packHandle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.refs--
	if h.refs == 0 && h.evicted {
		h.f.Close()
	}
}

// getBuf takes a buffer of length n from pool p.
func getBuf(p *sync.Pool, n int) *[]byte {
	if b, ok := p.Get().(*[]byte); ok && len(*b) == n {
		return b
	}
	b := make([]byte, n)
	return &b
}
