package jsonrpc

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// idOf is the part of a message that tells a reply from a request.
type idOf struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
}

// decodedReplyIDs is ReplyIDs by decoding the line: the oracle.
func decodedReplyIDs(t *testing.T, line string) []string {
	t.Helper()
	var msgs []idOf
	if strings.HasPrefix(strings.TrimSpace(line), "[") {
		if err := json.Unmarshal([]byte(line), &msgs); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	} else {
		var one idOf
		if err := json.Unmarshal([]byte(line), &one); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		msgs = []idOf{one}
	}
	var out []string
	for _, m := range msgs {
		if m.ID != nil && string(m.ID) != "null" && m.Method == nil {
			out = append(out, string(m.ID))
		}
	}
	return out
}

// ReplyIDs finds what decoding the line finds, on replies, errors,
// notifications and batches whose results hold strings with quotes,
// backslashes, brackets and escapes, and on a reply of megabytes.
func TestReplyIDsMatchDecoding(t *testing.T) {
	big, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 42, "result": map[string]any{
		"files": []map[string]string{{"before": strings.Repeat(`a "quoted" {line} [x] \ end`+"\n", 1<<16), "after": "ü\u2028\x01"}}}})
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"id":"not this","method":"nor this"}}`,
		`{"jsonrpc":"2.0","id":"a\"b","result":null}`,
		` { "jsonrpc" : "2.0" , "id" : 7 , "error" : {"code":-32600,"message":"bad [ { \\ \""}} `,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":3}}`,
		`{"jsonrpc":"2.0","id":9,"method":"roots/list"}`,
		`{"result":[1,2,[3,{"id":4}]],"id":-1.5e3,"jsonrpc":"2.0"}`,
		`[{"jsonrpc":"2.0","id":1,"result":true},{"jsonrpc":"2.0","method":"x"},{"jsonrpc":"2.0","id":"two","result":{}}]`,
		`[]`,
		`{}`,
		string(big),
	}
	for _, line := range lines {
		want := decodedReplyIDs(t, line)
		if got := ReplyIDs([]byte(line)); !slices.Equal(got, want) {
			t.Errorf("%.80s: ReplyIDs = %q, decoding finds %q", line, got, want)
		}
	}
}
