package jsonrpc

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestLineReader(t *testing.T) {
	in := "one\n\n  \r\n" + strings.Repeat("x", 70<<10) + "\ntwo\r\nlast"
	r := newLineReader(strings.NewReader(in), 64<<10)
	var got []string
	for {
		line, err := r.next()
		var tooLong errTooLong
		switch {
		case errors.As(err, &tooLong):
			got = append(got, "<too long>")
			continue
		case errors.Is(err, io.EOF):
		case err != nil:
			t.Fatal(err)
		default:
			got = append(got, strings.TrimSpace(string(line)))
			continue
		}
		break
	}
	if want := "one|<too long>|two|last"; strings.Join(got, "|") != want {
		t.Fatalf("lines = %q, want %q", strings.Join(got, "|"), want)
	}
}
