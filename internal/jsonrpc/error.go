package jsonrpc

import (
	"errors"
	"fmt"
)

// Error codes defined by JSON-RPC 2.0, LSP's RequestCancelled, and the
// start of the range reserved for application errors.
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeRequestCancelled = -32800
	CodeServerError      = -32000
)

// Error is a JSON-RPC error object. A handler returns one (possibly wrapped)
// to choose the code, message and data sent to the peer; Data is marshalled
// as JSON, e.g. map[string]any{"exit_code": 3, "kind": "busy"}.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc: %s (code %d)", e.Message, e.Code)
}

// ErrClosed is returned by Notify and Progress after Close, and is the cause
// of the contexts of requests cancelled by Close.
var ErrClosed = errors.New("jsonrpc: connection closed")

// errCancelRequest is the cause of a context cancelled by $/cancelRequest.
var errCancelRequest = errors.New("jsonrpc: request cancelled by the peer")

func invalidRequest(msg string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: "invalid request: " + msg}
}

// ParamsError is params that do not decode into the method's (unknown
// fields, wrong types, trailing data, a malformed _meta). It reaches
// Options.MapError, so that a server adds its error data as it does to its
// handlers' errors; the default sends it as Invalid Params with its text.
type ParamsError struct{ Err error }

func (e *ParamsError) Error() string { return "invalid params: " + e.Err.Error() }

// Unwrap returns the decoding's error.
func (e *ParamsError) Unwrap() error { return e.Err }

func invalidParams(err error) error { return &ParamsError{err} }

// defaultMapError sends a *ParamsError as Invalid Params and any other
// error that is not an *Error as a server error, with its text.
func defaultMapError(err error) *Error {
	if pe := (*ParamsError)(nil); errors.As(err, &pe) {
		return &Error{Code: CodeInvalidParams, Message: pe.Error()}
	}
	return &Error{Code: CodeServerError, Message: err.Error()}
}
