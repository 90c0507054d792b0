// Package kdfcost holds the argon2id cost with which engine/remote/crypt
// stretches a passphrase into a key: the cost it creates a remote's
// parameters with, and the least it accepts from a remote.
//
// It is a variable so that the tests of the packages under engine can
// lower it for the tests that only need some passphrase key (a derivation
// at the real cost takes seconds under the race detector). Nothing but a
// test's TestMain, before any test runs, may change it.
package kdfcost

// Cost is argon2id's cost: passes over memory, memory in KiB, lanes.
type Cost struct {
	Time      uint32
	MemoryKiB uint32
	Threads   uint8
}

// Passphrase is RFC 9106's second recommended option, 3 passes over
// 64 MiB in 4 lanes, unless a test lowered it.
var Passphrase = Cost{Time: 3, MemoryKiB: 64 << 10, Threads: 4}
