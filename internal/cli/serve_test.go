package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestIndexServeQueryCheck drives the online commands as a user would: build
// an index from the bundled sample, check it, serve it, query and check
// documents against the server, and stop it.
func TestIndexServeQueryCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	code, stdout, stderr := runCLI(t, "", "index", "build", "-q", "--data", dir, sample)
	if code != ExitOK || !strings.Contains(stdout, "indexed 1000 documents") {
		t.Fatalf("index build: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr = runCLI(t, "", "index", "check", "--data", dir); code != ExitOK || !strings.Contains(stdout, "documents 1000") {
		t.Fatalf("index check: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, "", "index", "stats", "--data", dir)
	var st map[string]any
	if code != ExitOK || json.Unmarshal([]byte(stdout), &st) != nil || st["documents"] != 1000.0 || st["bands"] != 16.0 {
		t.Fatalf("index stats: exit %d\n%s", code, stdout)
	}
	if code, _, stderr = runCLI(t, "", "index", "stats", "--data", dir, "--shingle", "char:5"); code != ExitFailure || !strings.Contains(stderr, "another shingle spec") {
		t.Errorf("stats under another spec: exit %d, %s", code, stderr)
	}
	if code, _, _ = runCLI(t, "", "index", "build", "--data", dir, sample); code != ExitFailure {
		t.Errorf("build into a non-empty index: exit %d; want 1", code)
	}
	if code, _, _ = runCLI(t, "", "serve"); code != ExitUsage {
		t.Errorf("serve without --data: exit %d; want 2", code)
	}

	srv := startServe(t, "--data", dir, "--preload")
	url := srv.url

	// The first article, queried, matches itself in the index.
	var first struct{ ID, Text string }
	data := readFirstLine(t, sample)
	json.Unmarshal(data, &first)
	code, stdout, stderr = runCLI(t, first.Text, "query", "--server", url)
	if code != ExitOK || !strings.Contains(stdout, `"status":"duplicate"`) || !strings.Contains(stdout, `"id":"`+first.ID+`"`) {
		t.Fatalf("query: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, _ = runCLI(t, "", "query", "--server", url, "--get", first.ID); code != ExitOK || !strings.Contains(stdout, first.ID) {
		t.Errorf("query --get: exit %d %s", code, stdout)
	}
	// New documents are stored; a repeat within the input is a duplicate.
	in := `{"id": "n1", "text": "an entirely new document about the quick brown fox and the lazy dog"}
{"id": "n2", "text": "an entirely new document about the quick brown fox and the lazy dog"}
`
	code, stdout, stderr = runCLI(t, in, "check", "--server", url, "-")
	if code != ExitOK || strings.Count(stdout, `"status":"new"`) != 1 || strings.Count(stdout, `"status":"duplicate"`) != 1 ||
		!strings.Contains(stderr, "1 new, 1 duplicate, 0 failed") {
		t.Fatalf("check: exit %d\n%s%s", code, stdout, stderr)
	}
	// Checking again with --no-insert: n1 is now a duplicate (of itself
	// under another id), nothing stored.
	code, stdout, stderr = runCLI(t, strings.ReplaceAll(in, `"n`, `"m`), "check", "--no-insert", "--server", url, "-")
	if code != ExitOK || strings.Count(stdout, `"status":"duplicate"`) != 2 {
		t.Fatalf("check --no-insert: exit %d\n%s%s", code, stdout, stderr)
	}
	// Sending the same documents again (a retry) answers as the first time;
	// a stored id with another text fails that document: exit 1.
	if code, stdout, stderr = runCLI(t, in, "check", "--server", url, "-"); code != ExitOK || !strings.Contains(stderr, "1 new, 1 duplicate, 0 failed") {
		t.Errorf("check again of the same documents: exit %d\n%s%s; want 0, answered as the first time", code, stdout, stderr)
	}
	if code, _, _ = runCLI(t, `{"id": "n1", "text": "another text entirely, about ships and the sea and the sky"}`, "check", "--server", url, "-"); code != ExitFailure {
		t.Errorf("check of a stored id with another text: exit %d; want 1", code)
	}
	if code, _, _ = runCLI(t, "x", "query", "--server", "http://127.0.0.1:1"); code != ExitFailure {
		t.Errorf("query of no server: exit %d; want 1", code)
	}
	if code := srv.stop(); code != ExitOK {
		t.Errorf("serve after SIGINT-like cancel: exit %d\n%s", code, srv.logs)
	}
	if code, stdout, _ = runCLI(t, "", "index", "check", "--data", dir); code != ExitOK || !strings.Contains(stdout, "documents 1001") {
		t.Errorf("index after serving: exit %d %s", code, stdout)
	}
}

func readFirstLine(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	return line
}

// syncBuffer is a bytes.Buffer that the server's logger may write while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestServeRepackInterval serves a new index that repacks every 50 ms,
// stores 200 articles with `neardup check`, waits for /metrics to show
// postings moved, stops the server and checks the index; and refuses
// --repack-interval on Redis and below zero.
func TestServeRepackInterval(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	if code, stdout, stderr := runCLI(t, "", "index", "build", "-q", "--data", dir); code != ExitOK {
		t.Fatalf("index build of an empty index: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--redis", "127.0.0.1:1", "--repack-interval", "1h"}, "no packed postings"},
		{[]string{"serve", "--data", dir, "--repack-interval", "-1s"}, "RepackInterval = -1s"},
		{[]string{"serve", "--data", dir, "--metrics-auth"}, "--metrics-auth needs a token"},
	} {
		if code, _, stderr := runCLI(t, "", tc.args...); code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, %q; want 2 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}

	srv := startServe(t, "--data", dir, "--repack-interval", "50ms")
	url := srv.url
	// moved returns neardup_index_repack_postings_total, or -1 while the
	// server does not answer.
	moved := func() float64 {
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			return -1
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		for _, line := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(line, "neardup_index_repack_postings_total "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				return f
			}
		}
		return -1
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s\n%s", what, srv.logs)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitUntil("the server", func() bool { return moved() >= 0 })

	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfterN(string(data), "\n", 201)[:200]
	code, _, stderr := runCLI(t, strings.Join(lines, ""), "check", "--server", url, "-")
	if code != ExitOK {
		t.Fatalf("check: exit %d\n%s", code, stderr)
	}
	waitUntil("a repack to move postings", func() bool { return moved() > 0 })
	if code := srv.stop(); code != ExitOK {
		t.Fatalf("serve: exit %d\n%s", code, srv.logs)
	}
	logs := srv.logs.String()
	if !strings.Contains(logs, "msg=repacked postings=") || !strings.Contains(logs, "repack_interval=50ms") {
		t.Errorf("serve's log has no repack line:\n%s", logs)
	}
	if code, stdout, _ := runCLI(t, "", "index", "check", "--data", dir); code != ExitOK || !strings.Contains(stdout, "problems 0") {
		t.Errorf("index check after serving: exit %d\n%s", code, stdout)
	}
}
