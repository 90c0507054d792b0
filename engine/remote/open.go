package remote

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
)

// Open opens the remote named by rawURL: file:///path (a directory,
// created by the first write if missing) or s3://bucket/prefix
// (configured by cfg). It sends no request, so it fails only on a
// malformed URL, a path that is not a directory or unreadable credentials; ctx bounds the work of opening, not the
// backend's life.
func Open(ctx context.Context, rawURL string, cfg Config) (Backend, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	switch u.Scheme {
	case "file":
		dir, err := fileURLPath(u)
		if err != nil {
			return nil, err
		}
		return OpenDir(dir)
	case "s3":
		return OpenS3(u, cfg)
	default:
		return nil, fmt.Errorf("remote: %s: unsupported scheme %q (want file or s3)", u.Redacted(), u.Scheme)
	}
}

// FileURL is the file:// URL that Open reads back as the absolute
// directory dir: file:///abs/path, or file:///C:/path on Windows.
func FileURL(dir string) string {
	p := filepath.ToSlash(dir)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// fileURLPath is the directory of a file URL: file:///abs/path, or
// file:///C:/path on Windows. A host other than localhost is refused, as a
// file URL cannot reach another machine by itself.
func fileURLPath(u *url.URL) (string, error) {
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("remote: %s: file URL with host %q (want file:///path)", u.Redacted(), u.Host)
	}
	p := u.Path
	if runtime.GOOS == "windows" && len(p) >= 3 && p[0] == '/' && p[2] == ':' {
		p = p[1:]
	}
	p = filepath.FromSlash(p)
	if p == "" || !filepath.IsAbs(p) {
		return "", fmt.Errorf("remote: %s: want an absolute path", u.Redacted())
	}
	return filepath.Clean(p), nil
}
