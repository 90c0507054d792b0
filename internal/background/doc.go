// Package background is what ckpt's background recompression process
// needs from the operating system beyond the engine: giving up CPU and I/O
// to every other process (LowerPriority), and a mark in the store that
// says it runs, for `ckpt stats` and for the saves that would start
// another one (Claim, Running).
package background
