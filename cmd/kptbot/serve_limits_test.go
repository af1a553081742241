package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/github/githubtest"
	"github.com/kptbot/kptbot/server"
)

// serveWith runs `kptbot serve` with the given HTTP limits (tests that
// change them do not run in parallel) and returns its address.
func serveWith(t *testing.T, lim server.HTTPLimits) string {
	t.Helper()
	old := httpLimits
	httpLimits = lim
	gh := githubtest.New(t)
	gh.Seed(forge.Repo{FullName: "acme/site-a"}, "main", map[string][]byte{"README.md": []byte("x\n")})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		var o, e strings.Builder
		done <- run(ctx, []string{"serve", "--config", serverConfig(t, gh.URL, addr), "--log-level", "error"}, &o, &e)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		httpLimits = old
	})
	for i := 0; i < 200; i++ {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			return addr
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("serve never answered")
	return ""
}

// closedByServer reads c until the server closes it; it fails when the
// generous deadline passes first (the server would hold it for ever).
func closedByServer(t *testing.T, c net.Conn, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: the server still holds the connection after 30s", what)
	}
}

// TestSlowClientsAreCutOff: a client that sends its headers, or its body,
// a trickle at a time is disconnected by the server (slowloris).
func TestSlowClientsAreCutOff(t *testing.T) {
	lim := server.DefaultHTTPLimits
	lim.ReadHeaderTimeout, lim.ReadTimeout = time.Second, 2*time.Second
	addr := serveWith(t, lim)

	slowHeaders, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slowHeaders.Close()
	fmt.Fprint(slowHeaders, "POST /webhooks/github HTTP/1.1\r\nHost: kptbot\r\nX-GitHub-Event: push\r\n")

	slowBody, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slowBody.Close()
	fmt.Fprint(slowBody, "POST /webhooks/github HTTP/1.1\r\nHost: kptbot\r\nX-GitHub-Event: push\r\nX-Hub-Signature-256: sha256=00\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"ref\":")
	go func() { // a byte now and then, as a slowloris does
		for i := 0; i < 60; i++ {
			time.Sleep(500 * time.Millisecond)
			if _, err := slowBody.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	closedByServer(t, slowHeaders, "headers sent a trickle at a time")
	closedByServer(t, slowBody, "a body sent a trickle at a time")
}

// TestOversizedDeliveryRefusedUnread: a delivery declaring more than the
// cap is answered 413 before the client has sent any of its body.
func TestOversizedDeliveryRefusedUnread(t *testing.T) {
	addr := serveWith(t, server.DefaultHTTPLimits)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /webhooks/github HTTP/1.1\r\nHost: kptbot\r\nX-GitHub-Event: push\r\nX-Hub-Signature-256: sha256=00\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", server.MaxWebhookBody+1)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer while the body is unsent: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", resp.StatusCode)
	}
}

// TestConnectionCap: with the cap reached by idle connections, a new
// client is not served until one of them goes.
func TestConnectionCap(t *testing.T) {
	lim := server.DefaultHTTPLimits
	lim.MaxConns = 2
	lim.ReadHeaderTimeout, lim.ReadTimeout = time.Hour, time.Hour
	addr := serveWith(t, lim)
	http.DefaultClient.CloseIdleConnections() // serveWith's probe holds none
	var held []net.Conn
	for i := 0; i < lim.MaxConns; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: kptbot\r\n") // never finished
		held = append(held, c)
	}
	time.Sleep(200 * time.Millisecond) // the server accepts both
	quick := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := quick.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatal("served a connection beyond the cap")
	}
	held[0].Close()
	patient := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := patient.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("not served once a connection closed: %v", err)
	}
	resp.Body.Close()
}
