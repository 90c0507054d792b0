//go:build race

package objects

// raceEnabled scales the long-stream test down under the race detector,
// which slows the byte loops of chunking and hashing by an order of
// magnitude.
const raceEnabled = true
