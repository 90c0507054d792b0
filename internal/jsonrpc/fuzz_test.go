package jsonrpc

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeMessage checks the decoder's contract on any line: it never
// panics; a line-level error is a parse error exactly when the line is not
// JSON; every member is ignored, invalid (with a null or valid id), or a
// request with a method, a valid id or none, and params that are an object
// or an array.
func FuzzDecodeMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"save","params":{"message":"m","_meta":{"progressToken":"t"}}}`,
		`[{"jsonrpc":"2.0","method":"x"},1,{"jsonrpc":"2.0","id":{},"method":"y"}]`,
		`[]`, `[`, `null`, `{"jsonrpc":"2.0","id":null,"method":"m","params":[1]}`,
		`{"jsonrpc":"2.0","id":"\u0061","result":1}`, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"a"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		reqs, batch, perr := decodeMessage(line)
		if perr != nil {
			if (perr.Code == CodeParseError) == json.Valid(line) {
				t.Fatalf("code %d for valid=%v line %q", perr.Code, json.Valid(line), line)
			}
			return
		}
		if len(reqs) == 0 || (!batch && len(reqs) != 1) {
			t.Fatalf("%d requests, batch %v", len(reqs), batch)
		}
		for _, r := range reqs {
			switch {
			case r.ignore:
			case r.err != nil:
				if r.id == nil || !validID(r.id) {
					t.Fatalf("invalid member without a reply id: %+v", r)
				}
			default:
				if r.method == "" || (r.id != nil && !validID(r.id)) || (r.params != nil && r.params[0] != '{' && r.params[0] != '[') {
					t.Fatalf("accepted %+v from %q", r, line)
				}
				if _, _, err := splitMeta(r.params); err == nil && r.id != nil {
					_ = idKey(r.id)
				}
			}
		}
	})
}
