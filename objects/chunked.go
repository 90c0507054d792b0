package objects

import (
	"fmt"
	"io"

	"github.com/zeebo/blake3"

	"github.com/ckpt/ckpt/objects/internal/pack"
)

// chunkedReader streams a chunked blob one verified chunk at a time and
// checks the whole content's hash at the end. It holds one chunk in memory.
type chunkedReader struct {
	s *Store
	// read reads a chunk's verified content (Store.content, or a
	// ReadSession's).
	read   func(Locator, ID) ([]byte, error)
	id     ID
	loc    Locator // of the chunk-list record, for error reports
	chunks []chunkRef
	hash   *blake3.Hasher
	cur    []byte // unread part of the current chunk
	err    error  // sticky: io.EOF after a verified end, or the failure
}

// openChunked reads the chunk list of blob id at loc; the chunks are read
// with read.
func (s *Store) openChunked(id ID, loc Locator, read func(Locator, ID) ([]byte, error)) (*chunkedReader, error) {
	chunks, err := s.readChunkList(id, loc)
	if err != nil {
		return nil, err
	}
	return &chunkedReader{s: s, read: read, id: id, loc: loc, chunks: chunks, hash: blake3.New()}, nil
}

// next returns the next verified chunk, or io.EOF once every chunk was
// returned and the whole-content hash matched.
func (r *chunkedReader) next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	if len(r.chunks) == 0 {
		r.err = io.EOF
		if ID(r.hash.Sum(nil)) != r.id {
			r.err = r.corrupt("chunks do not add up to the file's id")
		}
		return nil, r.err
	}
	c := r.chunks[0]
	r.chunks = r.chunks[1:]
	data, err := r.loadChunk(c)
	if err != nil {
		r.err = err
		return nil, err
	}
	r.hash.Write(data)
	return data, nil
}

// loadChunk reads one chunk through the index, checking it is a plain blob
// of the listed size.
func (r *chunkedReader) loadChunk(c chunkRef) ([]byte, error) {
	loc, found, err := r.s.idx.Locator(c.id)
	if err != nil {
		return nil, fmt.Errorf("look up chunk %s: %w", c.id.Short(), err)
	}
	if !found {
		return nil, r.corrupt("chunk " + c.id.Short() + " is not in the index")
	}
	if loc.Flags&pack.FlagChunked != 0 || loc.Size != int64(c.size) {
		return nil, r.corrupt("chunk " + c.id.Short() + " has the wrong kind or size")
	}
	return r.read(loc, c.id)
}

func (r *chunkedReader) corrupt(reason string) error {
	return &CorruptError{Pack: r.s.PackPath(r.loc.Pack), Offset: r.loc.Offset, ID: r.id, Reason: reason}
}

// Read implements io.Reader.
func (r *chunkedReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		chunk, err := r.next()
		if err != nil {
			return 0, err
		}
		r.cur = chunk
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// Close releases the reader; reading after Close fails.
func (r *chunkedReader) Close() error {
	r.chunks, r.cur, r.err = nil, nil, fmt.Errorf("read after close")
	return nil
}
