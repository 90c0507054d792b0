package ui

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
)

// tokenHeader carries the token on API calls made by scripts.
const tokenHeader = "X-Ckpt-Token"

// NewToken returns a fresh random token (256 bits, hex).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// guard enforces the package's security model (see the package doc) in
// front of next.
type guard struct {
	token []byte
	// cookie is named after the token's hash, so two servers on one host
	// (cookies ignore the port) never overwrite each other's cookie.
	cookie string
	// hostOK reports whether a Host header names this server.
	hostOK func(host string) bool
	next   http.Handler
}

func newGuard(token string, hostOK func(string) bool, next http.Handler) *guard {
	sum := sha256.Sum256([]byte(token))
	return &guard{token: []byte(token), cookie: "ckpt_ui_" + hex.EncodeToString(sum[:6]), hostOK: hostOK, next: next}
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	if !g.hostOK(r.Host) {
		http.Error(w, "forbidden: unexpected Host header", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if msg := g.unsafeRequestProblem(r); msg != "" {
			http.Error(w, "forbidden: "+msg, http.StatusForbidden)
			return
		}
	}
	if q := r.URL.Query().Get("token"); q != "" && r.URL.Path == "/" && r.Method == http.MethodGet {
		if !g.tokenOK(q) {
			http.Error(w, "forbidden: wrong token", http.StatusForbidden)
			return
		}
		// Keep the token out of the address bar and history from here on.
		http.SetCookie(w, &http.Cookie{Name: g.cookie, Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if !g.requestHasToken(r) {
		http.Error(w, "forbidden: open the address ckpt ui printed (it carries the token)", http.StatusForbidden)
		return
	}
	g.next.ServeHTTP(w, r)
}

func (g *guard) tokenOK(s string) bool {
	return subtle.ConstantTimeCompare([]byte(s), g.token) == 1
}

func (g *guard) requestHasToken(r *http.Request) bool {
	if h := r.Header.Get(tokenHeader); h != "" {
		return g.tokenOK(h)
	}
	c, err := r.Cookie(g.cookie)
	return err == nil && g.tokenOK(c.Value)
}

// unsafeRequestProblem checks a state-changing request: only POST, sent by
// this server's own page (Origin), with a JSON body (which a cross-site
// form cannot send without a CORS preflight this server never grants).
func (g *guard) unsafeRequestProblem(r *http.Request) string {
	if r.Method != http.MethodPost {
		return "method not allowed"
	}
	origin := r.Header.Get("Origin")
	if origin == "" || origin != "http://"+r.Host {
		return "cross-origin request refused"
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return "cross-site request refused"
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return "the body must be application/json"
	}
	return ""
}

func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// loopbackHost accepts a Host header whose name is a loopback IP literal or
// "localhost". A DNS-rebinding page reaches the server under the attacker's
// own name, which this refuses.
func loopbackHost(host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// boundHost accepts the exact address the server listens on, and loopback
// names on its port.
func boundHost(addr string) func(string) bool {
	_, port, _ := net.SplitHostPort(addr)
	return func(host string) bool {
		if host == addr {
			return true
		}
		_, p, err := net.SplitHostPort(host)
		return err == nil && p == port && loopbackHost(host)
	}
}
