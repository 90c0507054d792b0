package engine

import (
	"testing"
	"time"
)

// TestRestorePhasesAccountForItsTime checks that a restore says where its
// time went: every phase that does I/O took time, the phases fit inside its
// Duration, and a dry run fills only the phases it runs.
func TestRestorePhasesAccountForItsTime(t *testing.T) {
	f := newFixture(t, richTree(t))
	first := f.save("first")
	mutateEverything(t, f.ws)
	f.save("second")

	dry := f.restore(first.ID.String(), RestoreOptions{DryRun: true})
	p := dry.Phases
	if p.Backup <= 0 || p.Plan <= 0 {
		t.Errorf("dry run: backup %v, plan %v; want both > 0", p.Backup, p.Plan)
	}
	if p.Journal != 0 || p.Write != 0 || p.Place != 0 || p.Flush != 0 || p.Finish != 0 {
		t.Errorf("dry run filled phases it does not run: %+v", p)
	}

	res := f.restore(first.ID.String(), RestoreOptions{})
	p = res.Phases
	// Place may be only a sort of the result when each file was synced,
	// and Journal nothing: the journal's record is written while the
	// restore plans, and a plan that outlasts it leaves no wait.
	ran := map[string]time.Duration{"backup": p.Backup, "plan": p.Plan,
		"write": p.Write, "flush": p.Flush, "finish": p.Finish}
	sum := p.Place + p.Journal
	if p.Place < 0 || p.Journal < 0 {
		t.Errorf("restore: place took %v, journal %v", p.Place, p.Journal)
	}
	for name, d := range ran {
		if d <= 0 {
			t.Errorf("restore: phase %s took %v, want > 0 (phases %+v)", name, d, p)
		}
		sum += d
	}
	if sum > res.Duration {
		t.Errorf("restore: phases add up to %v, more than its Duration %v (%+v)", sum, res.Duration, p)
	}
}
