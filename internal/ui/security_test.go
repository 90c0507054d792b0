package ui_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/internal/ui"
)

// noRedirect keeps the client from following the token redirect, so the
// test sees the cookie being set.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	res, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

func TestRequestsWithoutTheTokenAreRefused(t *testing.T) {
	s := newStore(t, testtree.Dir{"a.txt": testtree.File{Content: "a"}})
	s.save("default", "one", nil)
	srv := serve(t, s.b)
	for _, path := range []string{"/", "/app.js", "/style.css", "/api/tasks", "/api/checkpoints?task=default", "/api/events", "/?token=wrong", "/?token=" + testToken[:len(testToken)-1]} {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if code, _ := do(t, req); code != http.StatusForbidden {
			t.Errorf("GET %s without the token: %d, want 403", path, code)
		}
	}
	req, _ := http.NewRequest("GET", srv.URL+"/api/tasks", nil)
	req.Header.Set(ui.TokenHeader, "nope")
	if code, _ := do(t, req); code != http.StatusForbidden {
		t.Errorf("wrong token header: %d, want 403", code)
	}
	req, _ = http.NewRequest("GET", srv.URL+"/api/tasks", nil)
	req.AddCookie(&http.Cookie{Name: ui.TokenCookie(testToken), Value: "nope"})
	if code, _ := do(t, req); code != http.StatusForbidden {
		t.Errorf("wrong token cookie: %d, want 403", code)
	}
}

func TestTheTokenInTheURLBecomesACookieAndLeavesTheAddressBar(t *testing.T) {
	s := newStore(t, testtree.Dir{"a.txt": testtree.File{Content: "a"}})
	srv := serve(t, s.b)
	res, err := noRedirect.Get(srv.URL + "/?token=" + testToken)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("token URL: %d to %q, want 303 to /", res.StatusCode, res.Header.Get("Location"))
	}
	cookies := res.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie %+v: want one HttpOnly SameSite=Strict cookie", cookies)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/", nil)
	req.AddCookie(cookies[0])
	code, body := do(t, req)
	if code != http.StatusOK || !strings.Contains(body, "<title>ckpt") {
		t.Fatalf("page with the cookie: %d %.80q", code, body)
	}
}

func TestForeignHostHeadersAreRefused(t *testing.T) {
	s := newStore(t, testtree.Dir{"a.txt": testtree.File{Content: "a"}})
	srv := serve(t, s.b)
	for _, host := range []string{"evil.example", "evil.example:80", "127.0.0.1.evil.example", "10.0.0.1"} {
		req := authed(t, "GET", srv.URL+"/api/tasks")
		req.Host = host
		if code, _ := do(t, req); code != http.StatusForbidden {
			t.Errorf("Host %q: %d, want 403", host, code)
		}
	}
	for _, host := range []string{"localhost:1234", "127.0.0.1", "[::1]:8080"} {
		req := authed(t, "GET", srv.URL+"/api/tasks")
		req.Host = host
		if code, _ := do(t, req); code != http.StatusOK {
			t.Errorf("Host %q: %d, want 200", host, code)
		}
	}
}

func TestBoundHostAcceptsTheListenAddressAndLoopbackNamesOnItsPort(t *testing.T) {
	ok := ui.BoundHost("192.168.1.5:4000")
	for host, want := range map[string]bool{
		"192.168.1.5:4000": true, "localhost:4000": true, "127.0.0.1:4000": true, "[::1]:4000": true,
		"192.168.1.5:4001": false, "localhost:4001": false, "evil.example:4000": false, "192.168.1.5": false,
	} {
		if got := ok(host); got != want {
			t.Errorf("Host %q: %v, want %v", host, got, want)
		}
	}
}

// restoreRequest is a POST to /api/restore from origin.
func restoreRequest(t *testing.T, srv, origin, contentType, body string) *http.Request {
	t.Helper()
	return postRequest(t, srv+"/api/restore", origin, contentType, body)
}

// postRequest is a POST with the token, from origin.
func postRequest(t *testing.T, url, origin, contentType, body string) *http.Request {
	t.Helper()
	req := authed(t, "POST", url)
	req.Body = io.NopCloser(strings.NewReader(body))
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	req.Header.Set("Content-Type", contentType)
	return req
}

func TestStateChangingRequestsFromOtherOriginsAreRefused(t *testing.T) {
	s := newStore(t, testtree.Dir{"a.txt": testtree.File{Content: "one"}})
	first := s.save("default", "one", nil)
	s.save("default", "two", testtree.Dir{"a.txt": testtree.File{Content: "two"}})
	counted := &countingBackend{Backend: s.b}
	srv := serve(t, counted)
	body := `{"task":"default","ref":"` + first.ID.String() + `"}`
	cases := map[string]*http.Request{
		"foreign origin": restoreRequest(t, srv.URL, "http://evil.example", "application/json", body),
		"no origin":      restoreRequest(t, srv.URL, "", "application/json", body),
		"null origin":    restoreRequest(t, srv.URL, "null", "application/json", body),
		"form body":      restoreRequest(t, srv.URL, srv.URL, "text/plain", body),
	}
	crossSite := restoreRequest(t, srv.URL, srv.URL, "application/json", body)
	crossSite.Header.Set("Sec-Fetch-Site", "cross-site")
	cases["cross-site fetch"] = crossSite
	put := restoreRequest(t, srv.URL, srv.URL, "application/json", body)
	put.Method = "PUT"
	cases["PUT"] = put
	for name, req := range cases {
		if code, _ := do(t, req); code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, code)
		}
	}
	if code, _ := do(t, authed(t, "GET", srv.URL+"/api/restore?ref="+first.ID.String())); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /api/restore: %d, want 405", code)
	}
	if n := counted.count("Restore"); n != 0 {
		t.Fatalf("the backend restored %d times for refused requests", n)
	}
	assertFile(t, s.ws, "a.txt", "two")
	if code, out := do(t, restoreRequest(t, srv.URL, srv.URL, "application/json", body)); code != http.StatusOK {
		t.Fatalf("same-origin restore: %d %s", code, out)
	}
	assertFile(t, s.ws, "a.txt", "one")
}

func TestResponsesCarrySecurityHeaders(t *testing.T) {
	s := newStore(t, testtree.Dir{"a.txt": testtree.File{Content: "a"}})
	srv := serve(t, s.b)
	res, err := http.DefaultClient.Do(authed(t, "GET", srv.URL+"/"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	csp := res.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	if res.Header.Get("X-Frame-Options") != "DENY" || res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers %v", res.Header)
	}
}

func TestServeBindsLoopbackAndStopsWithItsContext(t *testing.T) {
	s := newStore(t, testtree.Dir{"a.txt": testtree.File{Content: "a"}})
	ctx, cancel := context.WithCancel(context.Background())
	url, wait, err := ui.Serve(ctx, "", s.b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/?token=") {
		t.Fatalf("url %q", url)
	}
	base := strings.SplitN(url, "/?", 2)[0]
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	res, err := client.Get(url) // follows the redirect with the cookie
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Request.URL.String() != base+"/" {
		t.Fatalf("opening the printed address: %d at %s", res.StatusCode, res.Request.URL)
	}
	res, err = client.Get(base + "/api/tasks")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("API with the cookie: %d", res.StatusCode)
	}
	cancel()
	if err := wait(); err != nil {
		t.Fatalf("wait: %v", err)
	}
	if _, err := http.Get(base + "/"); err == nil {
		t.Fatal("the server still answers after its context ended")
	}
}
