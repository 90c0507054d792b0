package jsonrpc

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkClientCallLargeResult times a call whose result is the size of
// a served diff of 120 source files with both sides (about 1.6 MB of JSON),
// taken raw, as a host that decodes it itself does:
//
//	go test ./internal/jsonrpc -run '^$' -bench ClientCallLargeResult -benchtime 50x
func BenchmarkClientCallLargeResult(b *testing.B) {
	type file struct{ Path, Before, After, Diff string }
	side := strings.Repeat("\tif err := step(x, \"quoted\"); err != nil {\n\t\treturn err\n\t}\n", 60)
	files := make([]file, 120)
	for i := range files {
		files[i] = file{"a/b/c.go", side, side + "// edited\n", side}
	}
	diff := Method("diff", func(context.Context, echoParams) ([]file, error) { return files, nil })
	c, _ := clientOf(b, nil, diff)
	var raw json.RawMessage
	if err := c.Call(context.Background(), "diff", nil, nil, &raw); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if err := c.Call(context.Background(), "diff", nil, nil, &raw); err != nil {
			b.Fatal(err)
		}
	}
}
