package engine

import (
	"os"
	"testing"

	"github.com/ckpt/ckpt/engine/internal/kdfcost"
)

// recommendedKDFCost is the argon2id cost passphrase remotes are made
// with outside the tests (kdfcost.Passphrase before TestMain lowers it).
var recommendedKDFCost = kdfcost.Passphrase

// TestMain lowers the argon2id cost of passphrase keys for the tests,
// where a key at the recommended cost takes seconds to derive under the
// race detector; TestPassphraseRemoteIsMadeWithTheRecommendedCost derives
// one at that cost.
func TestMain(m *testing.M) {
	kdfcost.Passphrase = kdfcost.Cost{Time: 1, MemoryKiB: 64, Threads: 1}
	os.Exit(m.Run())
}
