//go:build linux

package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
)

// s3Proxy forwards HTTP requests to an S3 endpoint and counts what passes
// through it: requests, and body bytes sent up and down. Both tools under
// test talk to the same proxy, so their figures are counted the same way.
// Requests keep their Host header, so signatures made for the proxy's
// address verify at the endpoint.
type s3Proxy struct {
	URL  string // the proxy's base URL, to use as the endpoint
	srv  *http.Server
	reqs atomic.Int64
	up   atomic.Int64
	down atomic.Int64
}

// traffic is what passed through the proxy between two snapshots.
type traffic struct {
	Requests int64
	Up, Down int64 // body bytes
}

func (t traffic) sub(o traffic) traffic {
	return traffic{t.Requests - o.Requests, t.Up - o.Up, t.Down - o.Down}
}

// startS3Proxy listens on a loopback port and forwards to endpoint.
func startS3Proxy(endpoint string) (*s3Proxy, error) {
	target, err := url.Parse(endpoint)
	if err != nil || target.Host == "" {
		return nil, fmt.Errorf("S3 endpoint %q: want a URL such as http://127.0.0.1:8333", endpoint)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &s3Proxy{URL: "http://" + ln.Addr().String()}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
		},
		ModifyResponse: func(resp *http.Response) error {
			resp.Body = &countingBody{resp.Body, &p.down}
			return nil
		},
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.reqs.Add(1)
		if r.Body != nil {
			r.Body = &countingBody{r.Body, &p.up}
		}
		rp.ServeHTTP(w, r)
	})}
	go p.srv.Serve(ln)
	return p, nil
}

// snapshot is the traffic so far.
func (p *s3Proxy) snapshot() traffic {
	return traffic{p.reqs.Load(), p.up.Load(), p.down.Load()}
}

func (p *s3Proxy) close() { p.srv.Close() }

// countingBody adds the bytes read through it to n.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countingBody) Read(b []byte) (int, error) {
	k, err := c.ReadCloser.Read(b)
	c.n.Add(int64(k))
	return k, err
}
