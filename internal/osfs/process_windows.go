//go:build windows

package osfs

import "os"

var terminationSignals = []os.Signal{os.Interrupt}

func privateFiles() {}

func userPerm(perm os.FileMode) (os.FileMode, bool) { return perm, false }
