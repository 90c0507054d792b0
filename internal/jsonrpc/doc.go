// Package jsonrpc is a JSON-RPC 2.0 peer for one connection: it answers
// requests with methods registered as typed Go functions and sends
// notifications of its own (events, progress).
//
// # Framing
//
// Every message is one JSON document on one line, terminated by "\n" (a
// final line without a terminator is accepted); blank lines are skipped. A
// line longer than Options.MaxMessageBytes is discarded and answered with an
// Invalid Request error naming the limit; the connection stays usable.
// Replies and notifications are written one per line, each by a single Write,
// in the order they are produced.
//
// # Rules
//
//   - A message is a request object or a batch (a non-empty array of them).
//     An empty batch is answered with one Invalid Request error; a batch is
//     answered with one array holding a reply per member that is not a
//     notification; a batch of only notifications gets no reply.
//   - A line that is not JSON gets a Parse error (-32700) with a null id and
//     the connection goes on.
//   - An id is a string or a number; a null id is answered with a null id;
//     any other id (object, array, boolean) makes the request invalid
//     (-32600). A request without "id" is a notification and is never
//     answered, not even with an error. Two requests in flight may not share
//     an id.
//   - An unknown method is -32601; params that do not decode into the
//     method's params type (unknown fields included, "_meta" excepted) are
//     -32602; an error a handler returns is sent as itself when it is an
//     *Error, else through Options.MapError.
//   - Messages carrying "result" or "error" and no "method" (replies to a
//     peer's request) are ignored: this peer sends no requests.
//
// # Concurrency and cancellation
//
// Requests run concurrently, at most Options.Concurrency at a time; at most
// Options.MaxInFlight are admitted (queued or running) before reading pauses.
// Each request has its own context, cancelled by the notification
// "$/cancelRequest" {"id": ID} (as in LSP), by Conn.Close, or by the context
// given to Serve. A cancelled request that fails is answered with
// RequestCancelled (-32800); one that finishes anyway keeps its result. A
// request cancelled before it started never runs.
//
// # Progress
//
// A request whose params carry "_meta": {"progressToken": T} (T a string or
// a number) may report progress: Progress(ctx, value) sends the notification
// "$/progress" {"token": T, "value": value} before the reply.
//
// # Shutdown
//
// At end of input Serve lets the requests in flight finish and writes their
// replies (the peer may have closed only its writing side), then returns nil.
// Close, or cancelling Serve's context, cancels the requests in flight,
// closes the reader when it is an io.Closer so a blocked read returns, and
// Serve returns once every handler has returned: no goroutine started by the
// connection outlives Serve.
package jsonrpc
