package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// nullID is the id of replies to messages whose id is unknown or invalid.
var nullID = json.RawMessage("null")

// request is one decoded member of a message. A request with err set is
// invalid and is answered with err (and id, or null); one with ignore set is
// a reply from the peer and gets no answer.
type request struct {
	id     json.RawMessage // nil for a notification
	method string
	params json.RawMessage // nil when absent or null
	err    *Error
	ignore bool
}

// notification reports whether no reply may be sent for r.
func (r *request) notification() bool { return r.id == nil && r.err == nil }

// response is one reply.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"` // compact JSON: json.Marshal's output, or null
	Error   *Error          `json:"error,omitempty"`
}

// notificationMsg is a message this peer sends without an id.
type notificationMsg struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// decodeMessage parses one line: a single request or a batch. A non-nil
// *Error means the whole line is answered with that error and a null id.
func decodeMessage(line []byte) (reqs []request, batch bool, perr *Error) {
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return nil, false, &Error{Code: CodeParseError, Message: "parse error: " + err.Error()}
	}
	if line[0] != '[' {
		return []request{decodeRequest(line)}, false, nil
	}
	var members []json.RawMessage
	if err := json.Unmarshal(line, &members); err != nil {
		return nil, false, &Error{Code: CodeParseError, Message: "parse error: " + err.Error()}
	}
	if len(members) == 0 {
		return nil, false, invalidRequest("empty batch")
	}
	reqs = make([]request, len(members))
	for i, m := range members {
		reqs[i] = decodeRequest(m)
	}
	return reqs, true, nil
}

// decodeRequest checks one request object against the JSON-RPC 2.0 rules.
// Member names are matched exactly (case-sensitively).
func decodeRequest(raw json.RawMessage) request {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return request{id: nullID, err: invalidRequest("a request must be a JSON object")}
	}
	var req request
	id, hasID := m["id"]
	if hasID {
		if !validID(id) {
			return request{id: nullID, err: invalidRequest("id must be a string, a number or null")}
		}
		req.id = id
	}
	method, hasMethod := m["method"]
	if !hasMethod {
		if _, ok := m["result"]; ok {
			return request{ignore: true}
		}
		if _, ok := m["error"]; ok {
			return request{ignore: true}
		}
	}
	var version string
	if err := json.Unmarshal(m["jsonrpc"], &version); err != nil || version != "2.0" {
		return req.invalid(`"jsonrpc" must be "2.0"`)
	}
	if err := json.Unmarshal(method, &req.method); err != nil || req.method == "" {
		return req.invalid(`"method" must be a non-empty string`)
	}
	if params, ok := m["params"]; ok && string(params) != "null" {
		if params[0] != '{' && params[0] != '[' {
			return req.invalid(`"params" must be an object or an array`)
		}
		req.params = params
	}
	return req
}

// invalid marks r invalid, keeping its (valid) id for the reply.
func (r request) invalid(msg string) request {
	id := r.id
	if id == nil {
		id = nullID
	}
	return request{id: id, err: invalidRequest(msg)}
}

// validID reports whether raw is a string, a number or null.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return true
	}
	return string(raw) == "null"
}

// idKey is the canonical form of a valid id, so that "\u0061" and "a" name
// the same request.
func idKey(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return "s" + s
		}
	}
	return "n" + string(raw)
}
