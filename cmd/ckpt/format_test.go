package main

import "testing"

func TestSubjectIsOneLineOfTheListing(t *testing.T) {
	for msg, want := range map[string]string{
		"":                                "",
		"fix the parser":                  "fix the parser",
		"fix the parser\n\nwhy: it broke": "fix the parser …",
		"fix the parser\n\n  \n":          "fix the parser",
		"crlf\r\nsecond":                  "crlf …",
		"tab\there\x1b[31mred":            "tab here [31mred",
		"caf\xe9":                         "caf\uFFFD",
		"\n\nleading blank lines":         "leading blank lines",
	} {
		if got := subject(msg); got != want {
			t.Errorf("subject(%q) = %q, want %q", msg, got, want)
		}
	}
}
