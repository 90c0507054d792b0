package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// errTooLong reports a line longer than the limit; the line was discarded.
type errTooLong struct{ limit int }

func (e errTooLong) Error() string {
	return fmt.Sprintf("message exceeds the limit of %d bytes", e.limit)
}

// lineReader reads one message per line, bounded in size.
type lineReader struct {
	r     *bufio.Reader
	limit int
	buf   []byte
}

// readChunk is how much a connection's reader asks for at a time: a
// pipe's capacity, so that a message of megabytes (a diff's reply) takes
// a few reads instead of hundreds (a 2.9 MB line through a pipe: 7.7 ms
// with 4 KiB reads, 3.1 ms with 64 KiB).
const readChunk = 64 << 10

func newLineReader(r io.Reader, limit int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, readChunk), limit: limit}
}

// next returns the next non-blank line without its terminator (valid until
// the next call), errTooLong after discarding an oversized line, or the
// reader's error (io.EOF at the end).
func (l *lineReader) next() ([]byte, error) {
	for {
		line, err := l.line()
		if err != nil || len(bytes.TrimSpace(line)) > 0 {
			return line, err
		}
	}
}

// line reads up to the next "\n" or the end of input.
func (l *lineReader) line() ([]byte, error) {
	l.buf = l.buf[:0]
	tooLong := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !tooLong && len(l.buf)+len(chunk) > l.limit+1 {
			tooLong, l.buf = true, l.buf[:0]
		}
		if !tooLong {
			l.buf = append(l.buf, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && (len(l.buf) > 0 || tooLong):
			err = nil // a last line without a terminator
		case err != nil:
			return nil, err
		}
		line := bytes.TrimSuffix(l.buf, []byte("\n"))
		if tooLong || len(line) > l.limit {
			return nil, errTooLong{l.limit}
		}
		return line, nil
	}
}
