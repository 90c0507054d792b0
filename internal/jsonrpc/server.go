package jsonrpc

import (
	"fmt"
	"io"
	"strings"
)

// CancelMethod is the notification that cancels a request in flight.
const CancelMethod = "$/cancelRequest"

// Options tunes a Server; zero fields take the defaults.
type Options struct {
	// MaxMessageBytes bounds one incoming line (default 64 MiB).
	MaxMessageBytes int
	// Concurrency bounds the handlers running at once (default 8).
	Concurrency int
	// MaxInFlight bounds the requests admitted, queued or running (default
	// 1024). While it is reached the connection reads nothing, cancellations
	// included, until a request finishes: keep it well above Concurrency so
	// queued requests can still be cancelled.
	MaxInFlight int
	// MapError turns a handler's error that is not an *Error, and a
	// *ParamsError, into the error sent (default: Invalid Params for a
	// *ParamsError, else CodeServerError, with the error's text).
	MapError func(error) *Error
}

// Server holds the methods and options shared by its connections; it is
// immutable and safe for concurrent use.
type Server struct {
	routes map[string]Route
	opts   Options
}

// NewServer makes a server answering routes. Names must be unique and may
// not start with "rpc." (reserved by JSON-RPC) or "$/" (reserved for the
// protocol's own notifications).
func NewServer(opts Options, routes ...Route) (*Server, error) {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = 64 << 20
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 1024
	}
	if opts.MapError == nil {
		opts.MapError = defaultMapError
	}
	s := &Server{routes: make(map[string]Route, len(routes)), opts: opts}
	for _, r := range routes {
		switch _, dup := s.routes[r.name]; {
		case r.name == "" || r.call == nil:
			return nil, fmt.Errorf("jsonrpc: route %q is not made by Method", r.name)
		case strings.HasPrefix(r.name, "rpc.") || strings.HasPrefix(r.name, "$/"):
			return nil, fmt.Errorf("jsonrpc: method name %q is reserved", r.name)
		case dup:
			return nil, fmt.Errorf("jsonrpc: method %q registered twice", r.name)
		}
		s.routes[r.name] = r
	}
	return s, nil
}

// NewConn makes a connection reading requests from in and writing replies
// and notifications to out; call Serve to run it.
func (s *Server) NewConn(in io.Reader, out io.Writer) *Conn {
	c := &Conn{srv: s, in: in, out: out, closed: make(chan struct{}),
		slots: make(chan struct{}, s.opts.Concurrency), admitted: make(chan struct{}, s.opts.MaxInFlight)}
	c.mu.inflight = make(map[string]*inflight)
	return c
}
