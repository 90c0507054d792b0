//go:build !race

package objects

// raceEnabled scales the long-stream test down under the race detector.
const raceEnabled = false
