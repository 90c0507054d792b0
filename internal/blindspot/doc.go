// Package blindspot makes, for tests, the file changes a kernel's change
// notifications do not report, so that a test can check that a watched
// workspace's saves and re-verifications still see them.
package blindspot
