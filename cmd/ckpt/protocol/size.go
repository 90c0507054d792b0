package protocol

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSize reads a byte count: a number with an optional binary unit
// (K, M, G, T; "KiB", "KB" and "k" alike mean 1024). Every size flag
// parses with it.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	mult := int64(1)
	if n := len(t); n > 0 {
		if i := strings.IndexByte("KMGT", t[n-1]); i >= 0 {
			mult, t = int64(1)<<(10*(i+1)), t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v < 0 || v*float64(mult) > 1<<62 {
		return 0, UsageError(fmt.Sprintf("invalid size %q: use bytes or a number with K, M, G or T (binary units)", s))
	}
	return int64(v * float64(mult)), nil
}
