//go:build !darwin && !windows

package ui

func browserCommand(url string) (string, []string) { return "xdg-open", []string{url} }
