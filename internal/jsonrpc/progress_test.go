package jsonrpc

import (
	"context"
	"testing"
)

// steps reports three progress values and returns how many sends failed.
var steps = Method("steps", func(ctx context.Context, _ struct{}) (int, error) {
	for i := range 3 {
		if err := Progress(ctx, map[string]int{"done": i + 1, "total": 3}); err != nil {
			return 0, err
		}
	}
	return 3, nil
})

func TestProgressIsSentWithTheRequestTokenBeforeTheReply(t *testing.T) {
	p := startPeer(t, Options{}, steps)
	for _, token := range []string{`"tok"`, `17`} {
		p.send(`{"jsonrpc":"2.0","id":1,"method":"steps","params":{"_meta":{"progressToken":` + token + `}}}`)
		for i := range 3 {
			r := p.recv()
			want := `{"token":` + token + `,"value":{"done":` + string(rune('1'+i)) + `,"total":3}}`
			if r.Method != ProgressMethod || string(r.Params) != want || r.ID != nil {
				t.Fatalf("message %d = %+v params %s, want %s", i, r, r.Params, want)
			}
		}
		wantResult(t, p.recv(), "1", "3")
	}
}

func TestProgressWithoutTokenSendsNothing(t *testing.T) {
	p := startPeer(t, Options{}, steps)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"steps"}`)
	wantResult(t, p.recv(), "1", "3")
	p.send(`{"jsonrpc":"2.0","id":2,"method":"steps","params":{"_meta":{}}}`)
	wantResult(t, p.recv(), "2", "3")
	if err := Progress(context.Background(), 1); err != nil {
		t.Fatalf("Progress outside a request: %v", err)
	}
}

func TestProgressTokenMustBeStringOrNumber(t *testing.T) {
	p := startPeer(t, Options{}, steps)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"steps","params":{"_meta":{"progressToken":{"x":1}}}}`)
	wantError(t, p.recv(), CodeInvalidParams, "1")
}
