//go:build windows

package osfs

import (
	"errors"
	"os"
)

func userDataDir() (string, error) {
	if dir := os.Getenv("LOCALAPPDATA"); dir != "" {
		return dir, nil
	}
	return "", errors.New("osfs: %LOCALAPPDATA% is not set")
}
