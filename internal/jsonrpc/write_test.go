package jsonrpc

import (
	"bytes"
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
