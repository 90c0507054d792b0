package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
)

// JSON-RPC 2.0 error codes used by serve and mcp. Errors of ckpt itself use
// rpcAppError and carry the CLI's exit code in data.exit_code.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
	rpcInvalidParams  = -32602
	rpcAppError       = -32000
)

// maxRequestBytes bounds one request line.
const maxRequestBytes = 64 << 20

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int           `json:"code"`
	Message string        `json:"message"`
	Data    *rpcErrorData `json:"data,omitempty"`
}

// rpcErrorData tells a client the CLI's exit code for an application error.
type rpcErrorData struct {
	ExitCode int `json:"exit_code"`
}

// errorOf turns an operation's error into a JSON-RPC error.
func errorOf(err error) *rpcError {
	var usage usageError
	if errors.As(err, &usage) {
		return &rpcError{Code: rpcInvalidParams, Message: usage.msg}
	}
	code := exitCodeOf(err)
	return &rpcError{Code: rpcAppError, Message: message(err), Data: &rpcErrorData{ExitCode: code}}
}

// rpcHandler answers one request; a notification's answer is dropped.
type rpcHandler func(ctx context.Context, req *rpcRequest) (any, *rpcError)

// serveRPC reads one JSON-RPC request per line from r and writes one
// response per line to w, until r ends or ctx is cancelled. Requests are
// handled in order; notifications (no id) get no response. Cancellation
// ends it at once, even while it waits for a line; the goroutine reading r
// then stays blocked in Read until r ends or the process exits (a read of
// a terminal or pipe cannot be interrupted).
func serveRPC(ctx context.Context, r io.Reader, w io.Writer, handle rpcHandler) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	lines, readErr := readLines(ctx, r)
	for {
		var line []byte
		select {
		case <-ctx.Done():
			return ctx.Err()
		case l, ok := <-lines:
			if !ok {
				return <-readErr
			}
			line = bytes.TrimSpace(l)
		}
		if len(line) == 0 {
			continue
		}
		resp, answer := answerLine(ctx, line, handle)
		if !answer {
			continue
		}
		if err := enc.Encode(resp); err != nil {
			return err
		}
	}
}

// readLines sends each line of r on the returned channel, closed after r
// ends; its read error (nil at EOF) is then on the second channel. It stops
// sending when ctx is cancelled.
func readLines(ctx context.Context, r io.Reader) (<-chan []byte, <-chan error) {
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), maxRequestBytes)
		for sc.Scan() {
			select {
			case lines <- bytes.Clone(sc.Bytes()):
			case <-ctx.Done():
				return
			}
		}
		readErr <- sc.Err()
	}()
	return lines, readErr
}

// answerLine handles one request line and returns the response, and false
// for a notification (which gets none).
func answerLine(ctx context.Context, line []byte, handle rpcHandler) (rpcResponse, bool) {
	var req rpcRequest
	resp := rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null")}
	switch err := json.Unmarshal(line, &req); {
	case err != nil:
		resp.Error = &rpcError{Code: rpcParseError, Message: "parse error: " + err.Error()}
	case req.JSONRPC != "2.0" || req.Method == "":
		resp.Error = &rpcError{Code: rpcInvalidRequest, Message: `invalid request: want {"jsonrpc":"2.0","method":...}`}
	default:
		result, rerr := handle(ctx, &req)
		if req.ID == nil {
			return resp, false
		}
		resp.ID, resp.Result, resp.Error = req.ID, result, rerr
		if rerr == nil && result == nil {
			resp.Result = struct{}{}
		}
	}
	return resp, true
}
