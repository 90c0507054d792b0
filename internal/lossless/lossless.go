// Package lossless is the one convention by which a file name that is not
// valid UTF-8 crosses JSON without losing a byte. encoding/json writes such
// a name with U+FFFD in place of each bad byte, so "a\xff" and "a\xfe" both
// read back as "a\ufffd". Beside every such name the JSON carries its raw
// bytes in standard base64 — path_base64 beside path, old_path_base64
// beside old_path — present exactly when the name is not valid UTF-8, the
// way content_base64 carries contents that are not text. A list of names
// gets one list beside it (written_paths_base64 beside written_paths),
// present exactly when a name in it is not valid UTF-8, with every name of
// the list in the same order. What accepts names accepts the same form:
// paths_base64 beside paths, path_base64 instead of path.
package lossless

import (
	"encoding/base64"
	"fmt"
	"unicode/utf8"
)

// Base64 is name's bytes in standard base64 when name is not valid UTF-8,
// nil when its JSON string form already keeps every byte.
func Base64(name string) *string {
	if utf8.ValidString(name) {
		return nil
	}
	s := base64.StdEncoding.EncodeToString([]byte(name))
	return &s
}

// Base64List is every name of names in standard base64, in order, when
// one of them is not valid UTF-8; nil when the JSON list keeps every byte.
func Base64List(names []string) []string {
	lossy := false
	for _, n := range names {
		lossy = lossy || !utf8.ValidString(n)
	}
	if !lossy {
		return nil
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = base64.StdEncoding.EncodeToString([]byte(n))
	}
	return out
}

// Decode is the name whose bytes b64 holds in standard base64; field names
// the parameter it came in, for the error.
func Decode(field, b64 string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", fmt.Errorf("%s: %q is not standard base64: %w", field, b64, err)
	}
	return string(b), nil
}

// DecodeList is the names whose bytes each element of b64s holds.
func DecodeList(field string, b64s []string) ([]string, error) {
	out := make([]string, len(b64s))
	for i, s := range b64s {
		n, err := Decode(field, s)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}
