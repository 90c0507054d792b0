package protocol

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/jsonrpc"
)

// EncodeDiff gives the bytes that encoding DiffView's value gives, for a
// diff holding every kind of change and text JSON escapes (quotes,
// backslashes, control characters, HTML characters, U+2028, bytes that
// are not UTF-8), a binary file, a file over the size limit, and for a
// diff of nothing; with one core and with several.
func TestEncodeDiffIsTheViewEncoded(t *testing.T) {
	ws := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("edited.txt", "line \"one\"\n\tback\\slash <a href='x'>&amp;</a>\n")
	write("removed.go", "package gone\n")
	write("moved/from.txt", "a file that moves, long enough to be found as a rename\n")
	write("binary.bin", "\x00\x01\x02 binary")
	write("big.txt", string(bytes.Repeat([]byte("big\n"), 1<<18)))
	e, err := engine.Open(context.Background(), ws, engine.Options{StoreDir: filepath.Join(t.TempDir(), "store")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	save := func() string {
		t.Helper()
		r, err := e.Save(context.Background(), engine.SaveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.ID.String()
	}
	first := save()
	write("edited.txt", "line \"two\"\r\n\x01\x1f ctrl \u2028 sep \u2029 \xff\xfe not utf-8\n")
	if err := os.Remove(filepath.Join(ws, "removed.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(ws, "moved", "from.txt"), filepath.Join(ws, "moved", "to.txt")); err != nil {
		t.Fatal(err)
	}
	write("binary.bin", "\x00\x03 binary again")
	write("big.txt", string(bytes.Repeat([]byte("BIG\n"), 1<<18)))
	write("added/\xffname.txt", "new <file>\n")
	second := save()

	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for _, refs := range [][2]string{{first, second}, {second, first}, {second, second}, {first, engine.WorkspaceRef}} {
			t.Run(fmt.Sprintf("procs%d/%s..%s", procs, refs[0][:8], refs[1][:min(8, len(refs[1]))]), func(t *testing.T) {
				res, err := e.Diff(context.Background(), refs[0], refs[1], engine.DiffOptions{})
				if err != nil {
					t.Fatal(err)
				}
				view, err := DiffView(res, engine.DiffFormat{})
				if err != nil {
					t.Fatal(err)
				}
				want, err := jsonrpc.Marshal(view)
				if err != nil {
					t.Fatal(err)
				}
				got, err := EncodeDiff(res, engine.DiffFormat{})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("EncodeDiff gave\n%.600s\nthe view encodes as\n%.600s", got, want)
				}
				// The diff method's result (binary sides given too) is sent
				// as the encoding it keeps, which is its view's.
				host, err := encodeDiff(res, engine.DiffFormat{}, hostSides(res))
				if err != nil {
					t.Fatal(err)
				}
				sent, err := jsonrpc.Marshal(host)
				if err != nil {
					t.Fatal(err)
				}
				plain := host
				plain.encoded = nil
				if view, err := jsonrpc.Marshal(plain); err != nil || !bytes.Equal(sent, view) || bytes.Equal(sent, want) != (refs[0] == refs[1]) {
					t.Fatalf("the diff method sends\n%.600s\nits view encodes as\n%.600s (%v)", sent, view, err)
				}
				if refs[0] != refs[1] {
					kinds := map[string]bool{}
					for _, f := range view.Files {
						kinds[string(f.Status)] = true
						kinds["binary"] = kinds["binary"] || f.Binary
						kinds["too large"] = kinds["too large"] || f.TooLarge
						kinds["not UTF-8"] = kinds["not UTF-8"] || f.PathBase64 != nil
					}
					if len(kinds) != 7 { // added, deleted, modified, renamed, and the three flags
						t.Fatalf("the diff holds %v, want every kind", kinds)
					}
				}
			})
		}
		runtime.GOMAXPROCS(prev)
	}
}
