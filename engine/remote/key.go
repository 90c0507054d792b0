package remote

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxKeyLen is the longest key in bytes, S3's limit.
const MaxKeyLen = 1024

// ValidKey reports, as an error wrapping ErrInvalidKey, why key cannot name
// an object, or nil. A key is non-empty UTF-8 of at most MaxKeyLen bytes
// without control characters, made of segments separated by single slashes,
// none of them empty, "." or ".." (so no leading, trailing or doubled
// slash), and without backslashes. Any other character is allowed: spaces,
// '%', '+', '?', '#', non-ASCII letters. These are the keys that every
// S3-compatible store keeps verbatim: stores backed by a file system
// normalise the others (SeaweedFS's filer collapses "//" and "/./", and by
// default turns '\\' into '/').
//
// Callers must also never store both a key and a key below it ("a" and
// "a/b"): a file-system-backed store cannot hold a file and a directory
// of one name.
func ValidKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("%w: %d bytes, over %d", ErrInvalidKey, len(key), MaxKeyLen)
	}
	if err := validText(key); err != nil {
		return fmt.Errorf("%w %q: %w", ErrInvalidKey, key, err)
	}
	if strings.Contains(key, "\\") {
		return fmt.Errorf("%w %q: backslash", ErrInvalidKey, key)
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return fmt.Errorf("%w %q: empty segment", ErrInvalidKey, key)
		case ".", "..":
			return fmt.Errorf("%w %q: segment %q", ErrInvalidKey, key, seg)
		}
	}
	return nil
}

// validPut checks the arguments of a Put.
func validPut(key string, size int64) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("remote: put %s: negative size %d", key, size)
	}
	return nil
}

// validPrefix checks a List prefix: any prefix of a valid key, including
// one that ends in a slash or in the middle of a segment, or "".
func validPrefix(prefix string) error {
	if err := validText(prefix); err != nil {
		return fmt.Errorf("%w: prefix %q: %w", ErrInvalidKey, prefix, err)
	}
	if len(prefix) > MaxKeyLen {
		return fmt.Errorf("%w: prefix of %d bytes, over %d", ErrInvalidKey, len(prefix), MaxKeyLen)
	}
	return nil
}

func validText(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("not UTF-8")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("control character %U", r)
		}
	}
	return nil
}
