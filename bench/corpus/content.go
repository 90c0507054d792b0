package corpus

import (
	"math"
	"math/rand/v2"
)

// vocabulary is the token pool of generated source text: keywords,
// identifiers and punctuation in roughly the proportions of real code, so the
// text compresses about as well as source does (3–5x with zstd).
var vocabulary = []string{
	"func", "return", "if", "else", "for", "range", "var", "const", "type", "struct",
	"interface", "package", "import", "nil", "err", "ctx", "true", "false", "string", "int",
	"byte", "error", "map", "make", "len", "append", "defer", "go", "select", "case",
	"switch", "default", "break", "continue", "class", "def", "self", "let", "async", "await",
	"export", "from", "public", "private", "static", "void", "new", "this", "throw", "try",
	"config", "handler", "request", "response", "buffer", "reader", "writer", "client", "server", "cache",
	"index", "value", "count", "offset", "length", "result", "options", "logger", "parser", "token",
	"node", "tree", "entry", "path", "name", "size", "mode", "state", "event", "queue",
	"userID", "sessionKey", "maxRetries", "timeoutMs", "payload", "headers", "schema", "record", "batch", "stream",
	"=", "==", ":=", "!=", "(", ")", "{", "}", "[", "]", ",", ";", ".", "+", "-", "*", "&&", "||", "->", "=>",
	"0", "1", "2", "10", "42", "255", "1024", "\"ok\"", "\"error\"", "\"id\"", "'utf-8'", "0x1f",
}

// comments are whole lines sprinkled into text files.
var comments = []string{
	"// TODO: handle the retry path once the upstream API settles",
	"// NOTE: callers must hold the lock while mutating the map",
	"# keep this in sync with the schema version in config.yaml",
	"/* generated accessors below; edit the template, not this file */",
	"// returns the number of bytes written and the first error met",
}

// writeText appends about size bytes of source-like text to buf, drawn from
// rng, and returns the extended slice. Lines are 0–4 indents deep, 3–14
// tokens long.
func writeText(buf []byte, rng *rand.Rand, size int) []byte {
	end := len(buf) + size
	for len(buf) < end {
		if rng.IntN(12) == 0 {
			buf = append(buf, comments[rng.IntN(len(comments))]...)
			buf = append(buf, '\n')
			continue
		}
		for range rng.IntN(5) {
			buf = append(buf, '\t')
		}
		n := 3 + rng.IntN(12)
		for i := range n {
			if i > 0 {
				buf = append(buf, ' ')
			}
			buf = append(buf, vocabulary[rng.IntN(len(vocabulary))]...)
		}
		buf = append(buf, '\n')
	}
	return buf[:end]
}

// writeBinary appends size bytes of binary content to buf: a header with NUL
// bytes (so every tool classifies the file as binary) followed by random
// bytes, which do not compress.
func writeBinary(buf []byte, rng *rand.Rand, size int) []byte {
	header := []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}
	end := len(buf) + size
	buf = append(buf, header...)
	var word [8]byte
	for len(buf) < end {
		v := rng.Uint64()
		for i := range word {
			word[i] = byte(v >> (8 * i))
		}
		buf = append(buf, word[:]...)
	}
	return buf[:end]
}

// logNormal draws a size with the given median and shape (sigma of the
// underlying normal), clamped to [lo, hi].
func logNormal(rng *rand.Rand, median float64, sigma float64, lo, hi int) int {
	v := int(median * math.Exp(sigma*rng.NormFloat64()))
	return min(max(v, lo), hi)
}
