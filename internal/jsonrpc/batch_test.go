package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestEmptyBatchIsOneInvalidRequest(t *testing.T) {
	p := startPeer(t, Options{}, echo)
	p.send(`[]`)
	wantError(t, p.recv(), CodeInvalidRequest, "null")
}

func TestBatchMixingValidInvalidAndNotifications(t *testing.T) {
	p := startPeer(t, Options{}, echo)
	p.send(compact(t, `[
		{"jsonrpc":"2.0","id":1,"method":"echo","params":{"n":1}},
		1,
		{"jsonrpc":"2.0","method":"echo"},
		{"jsonrpc":"2.0","id":{"o":1},"method":"echo"},
		{"jsonrpc":"2.0","id":"u","method":"nosuch"},
		{"jsonrpc":"2.0","id":2,"method":"echo","params":{"bad":true}},
		{"jsonrpc":"2.0","id":3,"method":"echo","params":{"n":3}}
	]`))
	var got []reply
	if err := json.Unmarshal([]byte(p.line()), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 {
		t.Fatalf("got %d replies, want 6 (the notification is not answered): %+v", len(got), got)
	}
	wantResult(t, got[0], "1", `{"text":"","n":1}`)
	wantError(t, got[1], CodeInvalidRequest, "null")
	wantError(t, got[2], CodeInvalidRequest, "null")
	wantError(t, got[3], CodeMethodNotFound, `"u"`)
	wantError(t, got[4], CodeInvalidParams, "2")
	wantResult(t, got[5], "3", `{"text":"","n":3}`)
}

func TestBatchOfNotificationsGetsNoReply(t *testing.T) {
	p := startPeer(t, Options{}, echo)
	p.send(`[{"jsonrpc":"2.0","method":"echo"},{"jsonrpc":"2.0","method":"nosuch"}]`)
	p.send(`[{"jsonrpc":"2.0","id":5,"method":"echo"}]`)
	var got []reply
	if err := json.Unmarshal([]byte(p.line()), &got); err != nil || len(got) != 1 {
		t.Fatalf("reply after a notification batch: %v %+v", err, got)
	}
	wantResult(t, got[0], "5", `{"text":"","n":0}`)
}

// compact puts a JSON document on one line.
func compact(t *testing.T, doc string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(doc)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
