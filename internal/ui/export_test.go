package ui

// The names below let the external tests (package ui_test, which may import
// the engine adapter) check internals of the page's server.

type (
	DiffPage = diffPage
	FileView = fileView
)

const (
	MaxDiffPage = maxDiffPage
	TokenHeader = tokenHeader
)

var BoundHost = boundHost

// TokenCookie is the name of the cookie that carries token on a loopback server.
func TokenCookie(token string) string { return newGuard(token, loopbackHost, nil).cookie }
