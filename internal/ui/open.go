package ui

import "os/exec"

// OpenBrowser asks the desktop to show url in the user's browser (xdg-open
// on Linux and other unixes, open on macOS, the URL handler on Windows). It
// returns once the helper started; the browser itself may still fail.
func OpenBrowser(url string) error {
	name, args := browserCommand(url)
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // reap the helper; its outcome is the desktop's business
	return nil
}
