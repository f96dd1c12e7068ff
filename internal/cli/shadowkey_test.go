package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestShadowKeyed: key rotation through a shadow index. The primary is
// unkeyed, the shadow built under a key; serve refuses the shadow without
// --shadow-key-file, takes it with it, journals an insert for it, and index
// promote (with the shadow's key) applies the journal: the promoted index,
// served under its key, holds the insert and finds a stored article.
func TestShadowKeyed(t *testing.T) {
	dir := t.TempDir()
	key := writeKeyFile(t)
	primary, shadow := filepath.Join(dir, "primary"), filepath.Join(dir, "shadow")
	runOK := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runCLI(t, "", args...)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		return stdout
	}
	runOK("index", "build", "-q", "--data", primary, sample)
	runOK("index", "build", "-q", "--data", shadow, "--key-file", key, sample)

	code, _, stderr := runCLI(t, "", "serve", "--addr", "127.0.0.1:0", "--data", primary, "--shadow-data", shadow)
	if code != ExitFailure || !strings.Contains(stderr, "keyed spec") {
		t.Errorf("serve with a keyed shadow and no key: exit %d, %q; want 1 naming the keyed spec", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "serve", "--data", primary, "--shadow-key-file", key)
	if code != ExitUsage || !strings.Contains(stderr, "--shadow-key-file is the key of --shadow-data") {
		t.Errorf("--shadow-key-file without --shadow-data: exit %d, %q; want 2", code, stderr)
	}

	s := startServe(t, "--data", primary, "--shadow-data", shadow, "--shadow-key-file", key)
	body, _ := json.Marshal(map[string]string{"id": "rotated-1", "text": "a document written while the keys rotate, about lighthouses, tides and the long coast road"})
	if status, answer := s.post("/v1/documents", string(body)); status != 201 {
		t.Fatalf("insert: %d %s", status, answer)
	}
	if code := s.stop(); code != ExitOK {
		t.Fatalf("serve: exit %d:\n%s", code, s.logs)
	}

	code, _, stderr = runCLI(t, "", "index", "promote", "--data", primary, "--shadow-data", shadow)
	if code != ExitFailure || !strings.Contains(stderr, "keyed spec") {
		t.Errorf("promote without the shadow's key: exit %d, %q; want 1 naming the keyed spec", code, stderr)
	}
	runOK("index", "promote", "--data", primary, "--shadow-data", shadow, "--shadow-key-file", key)

	s = startServe(t, "--data", shadow, "--key-file", key)
	if status, answer := s.post("/v1/check", string(body)); status != 200 || !strings.Contains(answer, `"id":"rotated-1"`) {
		t.Errorf("check of the journaled insert on the promoted index: %d %s", status, answer)
	}
	var first struct{ ID, Text string }
	json.Unmarshal(readFirstLine(t, sample), &first)
	q, _ := json.Marshal(map[string]string{"text": first.Text})
	if status, answer := s.post("/v1/check", string(q)); status != 200 || !strings.Contains(answer, `"id":"`+first.ID+`"`) {
		t.Errorf("check of a stored article on the promoted index: %d %s", status, answer)
	}
}
