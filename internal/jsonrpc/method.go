package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Route is one method a Server answers, made by Method.
type Route struct {
	name string
	call func(ctx context.Context, params json.RawMessage) (any, error)
}

// Name is the method name the route answers.
func (r Route) Name() string { return r.name }

// Method makes a route that decodes params strictly into P (absent or null
// params give P's zero value; unknown fields and trailing data are Invalid
// Params errors; "_meta" is taken out first) and replies with fn's result
// marshalled as JSON.
func Method[P, R any](name string, fn func(context.Context, P) (R, error)) Route {
	return Route{name: name, call: func(ctx context.Context, raw json.RawMessage) (any, error) {
		var p P
		if raw != nil {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&p); err != nil {
				return nil, invalidParams(err)
			}
			if dec.More() {
				return nil, invalidParams(errors.New("data after the params value"))
			}
		}
		return fn(ctx, p)
	}}
}

// meta is the part of "_meta" this package reads.
type meta struct {
	ProgressToken json.RawMessage `json:"progressToken"`
}

// splitMeta takes "_meta" out of an object's params and returns the rest
// and the progress token (nil when there is none).
func splitMeta(params json.RawMessage) (rest, token json.RawMessage, err error) {
	if len(params) == 0 || params[0] != '{' || !bytes.Contains(params, []byte(`_meta`)) {
		return params, nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(params, &fields); err != nil {
		return nil, nil, invalidParams(err)
	}
	raw, ok := fields["_meta"]
	if !ok {
		return params, nil, nil
	}
	delete(fields, "_meta")
	if rest, err = json.Marshal(fields); err != nil {
		return nil, nil, invalidParams(err)
	}
	if string(raw) == "null" {
		return rest, nil, nil
	}
	var m meta
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, invalidParams(fmt.Errorf("_meta: %w", err))
	}
	if m.ProgressToken != nil && string(m.ProgressToken) != "null" {
		if c := m.ProgressToken[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
			return nil, nil, invalidParams(errors.New("_meta.progressToken must be a string or a number"))
		}
		token = m.ProgressToken
	}
	return rest, token, nil
}
