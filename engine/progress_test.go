package engine

import (
	"testing"
	"time"
)

func TestProgressMeterRateLimits(t *testing.T) {
	t.Parallel()
	var got []ScanProgress
	m := newProgressMeter(func(p ScanProgress) { got = append(got, p) })
	m.tick(1, 10)
	if len(got) != 0 {
		t.Fatal("reported before the interval passed")
	}
	m.next.Store(time.Now().Add(-time.Millisecond).UnixNano()) // the interval has passed
	m.tick(2, 20)
	m.tick(3, 30)
	if len(got) != 1 || got[0].Files != 2 || got[0].BytesHashed != 20 {
		t.Fatalf("reports = %+v, want exactly the first tick after the interval", got)
	}
	var none *progressMeter
	none.tick(1, 1) // a nil meter is a no-op
}
