package main

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
)

// diff --json keeps the bytes of text that is not valid UTF-8 (a Latin-1
// file) as base64, where they were replaced by U+FFFD, cold and through a
// server alike, and as the diff method gives them.
func TestCLIDiffJSONKeepsTextThatIsNotUTF8(t *testing.T) {
	e := newEnv(t)
	before, after := "caf\xe9\n", "caf\xe9\nna\xefve\n"
	e.write("latin1.txt", before)
	e.ok("save", "-m", "one")
	e.write("latin1.txt", after)
	e.ok("save", "-m", "two")
	check := func(how string, d protocol.DiffJSON) {
		t.Helper()
		if len(d.Files) != 1 {
			t.Fatalf("%s: %d files", how, len(d.Files))
		}
		f := d.Files[0]
		b64 := func(s *string) string {
			if s == nil {
				return "<nil>"
			}
			b, err := base64.StdEncoding.DecodeString(*s)
			if err != nil {
				t.Fatalf("%s: %v", how, err)
			}
			return string(b)
		}
		if f.Before != nil || f.After != nil || b64(f.BeforeBase64) != before || b64(f.AfterBase64) != after {
			t.Fatalf("%s: before %v/%q, after %v/%q; want both sides' bytes in base64 only", how, f.Before, b64(f.BeforeBase64), f.After, b64(f.AfterBase64))
		}
	}
	check("cold", decode[protocol.DiffJSON](t, e.ok("diff", "--json", "@1", "@2")))
	in := `{"jsonrpc":"2.0","id":1,"method":"diff","params":{"from":"@1","to":"@2"}}` + "\n"
	r := e.run(in, "serve")
	line, _, _ := strings.Cut(r.stdout[strings.Index(r.stdout, `{"jsonrpc":"2.0","id":1`):], "\n")
	check("the diff method", decode[struct{ Result protocol.HostDiffJSON }](t, line).Result)
	e.listenServer()
	check("through a server", decode[protocol.DiffJSON](t, e.ok("--lock-timeout", "0", "diff", "--json", "@1", "@2")))
}
