package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// A response carrying a result is the line encoding/json gives for it
// (without HTML escapes), whatever its id and result hold; the result is
// copied, not scanned again.
func TestResultLineIsTheResponseEncoded(t *testing.T) {
	results := []any{nil, 42, "plain", "<a href=\"x\">&amp;</a>\t\"quoted\" \u2028 \xff not utf-8",
		map[string]any{"files": []any{map[string]any{"before": "line\n<b>", "after": nil}}}}
	ids := []json.RawMessage{nil, json.RawMessage(`7`), json.RawMessage(`"id <&>"`), json.RawMessage(` "spaced" `)}
	for _, id := range ids {
		for _, r := range results {
			raw, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			m := response{JSONRPC: "2.0", ID: id, Result: raw}
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(m); err != nil {
				t.Fatal(err)
			}
			got, err := encodeLine(response{ID: id, Result: raw})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("id %s, result %s:\n got %s\nwant %s", id, raw, got, want.Bytes())
			}
		}
	}
}

// A result is sent as encoding/json encodes it without HTML escapes: a
// diff's sides are source text, full of <, > and &, which would each take
// six bytes to send.
func TestResultIsSentWithoutHTMLEscapes(t *testing.T) {
	p := startPeer(t, Options{}, Method("text", func(context.Context, echoParams) (echoParams, error) {
		return echoParams{Text: "if a < b && c > d {\n\treturn \"<&>\" // \u2028\n}"}, nil
	}))
	p.send(`{"jsonrpc":"2.0","id":1,"method":"text","params":{}}`)
	want := `{"jsonrpc":"2.0","id":1,"result":{"text":"if a < b && c > d {\n\treturn \"<&>\" // \u2028\n}","n":0}}`
	if got := p.line(); got != want {
		t.Fatalf("reply\n got %s\nwant %s", got, want)
	}
}
