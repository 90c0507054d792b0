package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/ckpt/ckpt/engine"
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
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// errorOf turns an operation's error into a JSON-RPC error.
func errorOf(err error) *rpcError {
	var usage usageError
	if errors.As(err, &usage) {
		return &rpcError{Code: rpcInvalidParams, Message: usage.msg}
	}
	code := exitCodeOf(err)
	return &rpcError{Code: rpcAppError, Message: engine.Message(err), Data: map[string]int{"exit_code": code}}
}

// rpcHandler answers one request; a notification's answer is dropped.
type rpcHandler func(ctx context.Context, req *rpcRequest) (any, *rpcError)

// serveRPC reads one JSON-RPC request per line from r and writes one
// response per line to w, until r ends or ctx is cancelled. Requests are
// handled in order; notifications (no id) get no response.
func serveRPC(ctx context.Context, r io.Reader, w io.Writer, handle rpcHandler) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxRequestBytes)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
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
				continue // a notification
			}
			resp.ID, resp.Result, resp.Error = req.ID, result, rerr
			if rerr == nil && result == nil {
				resp.Result = struct{}{}
			}
		}
		if err := enc.Encode(resp); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return sc.Err()
}
