package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// servedCLI is a `neardup serve` run by Main in a goroutine.
type servedCLI struct {
	t      *testing.T
	url    string
	logs   *syncBuffer
	cancel context.CancelFunc
	done   chan int
}

// startServe runs `neardup serve --addr ADDR args...` and waits until it
// answers /healthz; the caller stops it with stop (or the test's end does).
func startServe(t *testing.T, args ...string) *servedCLI {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	s := &servedCLI{t: t, url: "http://" + addr, logs: &syncBuffer{}, cancel: cancel, done: make(chan int, 1)}
	go func() {
		s.done <- Main(ctx, append([]string{"serve", "--addr", addr}, args...), IO{Out: &bytes.Buffer{}, Err: s.logs})
	}()
	t.Cleanup(func() { s.stop() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(s.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			return s
		}
		select {
		case code := <-s.done:
			s.done <- code
			t.Fatalf("serve exited %d before answering:\n%s", code, s.logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", s.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// get returns the body of GET path, failing the test unless it answers 200.
func (s *servedCLI) get(path string) string {
	s.t.Helper()
	resp, err := http.Get(s.url + path)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

// post sends a JSON body and returns the status and the body.
func (s *servedCLI) post(path, body string) (int, string) {
	s.t.Helper()
	resp, err := http.Post(s.url+path, "application/json", strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// stop shuts the server down and returns its exit code (once; later calls
// return the same code).
func (s *servedCLI) stop() int {
	s.cancel()
	code := <-s.done
	s.done <- code
	return code
}
