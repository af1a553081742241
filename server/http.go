package server

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// HTTPLimits bound what one client can hold of the webhook server: a
// slow client is cut off, and the connections open at once are capped,
// so no one can pin the server's memory or file descriptors.
type HTTPLimits struct {
	// ReadHeaderTimeout and ReadTimeout bound reading a request's
	// headers and whole request (a slow body is cut off).
	ReadHeaderTimeout, ReadTimeout time.Duration
	// WriteTimeout bounds answering; IdleTimeout a kept-alive
	// connection waiting for its next request.
	WriteTimeout, IdleTimeout time.Duration
	// MaxConns caps connections open at once (more wait to be accepted).
	MaxConns int
	// MaxHeaderBytes bounds the request headers.
	MaxHeaderBytes int
}

// DefaultHTTPLimits suit GitHub and GitLab deliveries: GitHub gives a
// delivery 10 s, so a request still being read after 30 s is an attack
// or a broken client.
var DefaultHTTPLimits = HTTPLimits{ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
	WriteTimeout: 30 * time.Second, IdleTimeout: 60 * time.Second, MaxConns: 256, MaxHeaderBytes: 64 << 10}

// HTTPServer is an http.Server for s's routes within lim; serve it with
// Serve(LimitListener(l, lim.MaxConns)).
func (s *Server) HTTPServer(lim HTTPLimits) *http.Server {
	return &http.Server{Handler: s.Router(), ReadHeaderTimeout: lim.ReadHeaderTimeout, ReadTimeout: lim.ReadTimeout,
		WriteTimeout: lim.WriteTimeout, IdleTimeout: lim.IdleTimeout, MaxHeaderBytes: lim.MaxHeaderBytes}
}

// LimitListener accepts at most n connections open at once (n < 1: no
// limit): Accept waits until one closes.
func LimitListener(l net.Listener, n int) net.Listener {
	if n < 1 {
		return l
	}
	return &limitListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
