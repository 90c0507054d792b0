package diffview

import (
	"bytes"
	"fmt"

	"github.com/ckpt/ckpt/objects"
)

// BlobLoader returns the content of a blob (file bytes or symlink target)
// found at path on one side of a diff. The returned slice is only read.
// Errors are passed through wrapped with %w. A loader must be safe for
// concurrent use: patches and stats load several changes at once.
type BlobLoader interface {
	LoadBlob(path string, id objects.ID) ([]byte, error)
}

// BlobPrefixLoader is an optional extension of BlobLoader: LoadBlobPrefix
// returns at most the first n bytes of the blob. When a loader implements
// it, over-limit blobs are read only as far as the binary test needs.
type BlobPrefixLoader interface {
	LoadBlobPrefix(path string, id objects.ID, n int) ([]byte, error)
}

// Defaults used for zero fields of Options.
const (
	DefaultContext   = 3
	DefaultMaxBytes  = 1 << 20
	DefaultMaxLines  = 20000
	DefaultStatWidth = 80
)

// binarySniffLen is how many leading bytes IsBinary examines (git's rule).
const binarySniffLen = 8000

// Options control rendering. The zero value selects the defaults.
type Options struct {
	// Context is the number of context lines around each hunk (0 = 3).
	Context int
	// Color adds ANSI colours; the caller decides (terminal, NO_COLOR).
	Color bool
	// MaxBytes is the largest side, in bytes, that is diffed line by
	// line; larger files are "too large" (0 = 1 MiB, negative = no limit).
	MaxBytes int64
	// MaxLines is the largest line count of a side that is diffed line
	// by line (0 = 20,000, negative = no limit).
	MaxLines int
	// StatWidth is the total width of WriteStat lines (0 = 80).
	StatWidth int
}

func (o Options) withDefaults() Options {
	if o.Context <= 0 {
		o.Context = DefaultContext
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxLines == 0 {
		o.MaxLines = DefaultMaxLines
	}
	if o.StatWidth <= 0 {
		o.StatWidth = DefaultStatWidth
	}
	return o
}

// IsBinary reports whether data looks binary: a NUL byte within its first
// 8000 bytes, as git decides.
func IsBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), binarySniffLen)], 0) >= 0
}

// contents is what a renderer knows about the bytes of a change.
// before and after are set only for text that is not too large.
type contents struct {
	before, after []byte
	binary        bool
	tooLarge      bool
}

// loadContents loads both sides of a change (a nil side is absent). Sides
// bigger than opts.MaxBytes are only sniffed for binary content; text
// longer than opts.MaxLines is dropped and marked too large.
func loadContents(beforePath, afterPath string, before, after *Side, from, to BlobLoader, opts Options) (contents, error) {
	var c contents
	c.tooLarge = overSize(before, opts) || overSize(after, opts)
	var err error
	if c.before, err = loadSide(from, beforePath, before, c.tooLarge); err != nil {
		return contents{}, err
	}
	if c.after, err = loadSide(to, afterPath, after, c.tooLarge); err != nil {
		return contents{}, err
	}
	c.binary = IsBinary(c.before) || IsBinary(c.after)
	if !c.tooLarge && !c.binary && opts.MaxLines >= 0 {
		c.tooLarge = lineCount(c.before) > opts.MaxLines || lineCount(c.after) > opts.MaxLines
	}
	if c.binary || c.tooLarge {
		c.before, c.after = nil, nil
	}
	return c, nil
}

func overSize(s *Side, opts Options) bool {
	return s != nil && opts.MaxBytes >= 0 && s.Size > opts.MaxBytes
}

// loadSide returns the blob of s, or only its first binarySniffLen bytes
// when sniffOnly is set.
func loadSide(l BlobLoader, path string, s *Side, sniffOnly bool) ([]byte, error) {
	if s == nil {
		return nil, nil
	}
	var data []byte
	var err error
	if pl, ok := l.(BlobPrefixLoader); ok && sniffOnly {
		data, err = pl.LoadBlobPrefix(path, s.ID, binarySniffLen)
	} else {
		data, err = l.LoadBlob(path, s.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("load %q (%s): %w", path, s.ID.Short(), err)
	}
	if sniffOnly {
		data = data[:min(len(data), binarySniffLen)]
	}
	return data, nil
}

// lineCount counts lines, including a last line without a newline.
func lineCount(data []byte) int {
	n := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}
