// Package apisurface holds the tests that keep ckpt's public packages
// what they promise: the go doc text of each is compared with the golden
// copy under testdata/godoc, so the exported surface never grows or
// changes unnoticed, and their imports are checked to run one way
// (engine → diffview, walker, index → objects; walker imports nothing of
// ckpt but walker/ignore; diffview no Pebble; the ui page none of the
// engine's layers, which cmd/ckpt/uiengine adapts to it).
//
// After a deliberate change of a public API, write the goldens again with
//
//	go test ./internal/apisurface -run TestGoDoc -update
//
// and review the difference like any other change.
package apisurface
