//go:build windows

package osfs

import "os"

var terminationSignals = []os.Signal{os.Interrupt}

func privateFiles() {}
