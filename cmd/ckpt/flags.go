package main

import (
	"fmt"
	"strconv"
	"strings"
)

// parseSize reads a byte count: a number with an optional binary unit
// (K, M, G, T; "KiB", "KB" and "k" alike mean 1024). Every size flag
// parses with it.
func parseSize(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	mult := int64(1)
	if n := len(t); n > 0 {
		if i := strings.IndexByte("KMGT", t[n-1]); i >= 0 {
			mult, t = int64(1)<<(10*(i+1)), t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v < 0 || v*float64(mult) > 1<<62 {
		return 0, usageError{fmt.Sprintf("invalid size %q: use bytes or a number with K, M, G or T (binary units)", s)}
	}
	return int64(v * float64(mult)), nil
}

// sizeFlag is a size flag that also takes a negative integer (a
// meaning the flag gives it, such as -1 for no limit; checked later).
type sizeFlag struct{ n *int64 }

func (f *sizeFlag) String() string {
	if f.n == nil {
		return "0"
	}
	return strconv.FormatInt(*f.n, 10)
}

func (f *sizeFlag) Set(s string) error {
	if v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
		*f.n = v
		return nil
	}
	v, err := parseSize(s)
	if err != nil {
		return err
	}
	*f.n = v
	return nil
}

func (f *sizeFlag) Type() string { return "size" }
