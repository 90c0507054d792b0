package main

import (
	"strconv"
	"strings"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
)

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
	v, err := protocol.ParseSize(s)
	if err != nil {
		return err
	}
	*f.n = v
	return nil
}

func (f *sizeFlag) Type() string { return "size" }
