package cli

import (
	"strings"
	"testing"
)

// TestServeMemoryIndex serves a new index in memory: documents checked in
// are stored and found again, as with a Pebble index; the flags of a stored
// index are refused beside it.
func TestServeMemoryIndex(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--memory-index", "--data", t.TempDir()},
		{"serve", "--memory-index", "--redis", "127.0.0.1:1"},
		{"serve", "--memory-index", "--repack-interval", "1h"},
		{"serve", "--memory-index", "--preload"},
	} {
		if code, _, stderr := runCLI(t, "", args...); code != ExitUsage || !strings.Contains(stderr, "--memory-index serves a new index in memory") {
			t.Errorf("%s: exit %d, %q; want 2", strings.Join(args, " "), code, stderr)
		}
	}

	srv := startServe(t, "--memory-index", "--threshold", "0.9")
	url := srv.url
	text := "an entirely new document about the quick brown fox and the lazy dog by the river"
	in := `{"id": "n1", "text": "` + text + `"}
{"id": "n2", "text": "` + text + `"}
{"id": "n3", "text": "another text entirely, about ships and the sea and the sky at night"}
`
	code, stdout, stderr := runCLI(t, in, "check", "--server", url, "-")
	if code != ExitOK || !strings.Contains(stderr, "2 new, 1 duplicate, 0 failed") {
		t.Fatalf("check: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, text, "query", "--server", url)
	if code != ExitOK || !strings.Contains(stdout, `"status":"duplicate"`) || !strings.Contains(stdout, `"id":"n1"`) {
		t.Fatalf("query: exit %d\n%s%s", code, stdout, stderr)
	}
	if code := srv.stop(); code != ExitOK {
		t.Fatalf("serve: exit %d\n%s", code, srv.logs)
	}
	if logs := srv.logs.String(); !strings.Contains(logs, "threshold 0.9") {
		t.Errorf("serve's log does not name the index's threshold:\n%s", logs)
	}
}
