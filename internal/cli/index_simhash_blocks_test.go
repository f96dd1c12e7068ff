package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/sketch"
)

// TestIndexBuildSimHashExpectedDocs: index build --sketch simhash
// --expected-docs N makes an index whose blocks are those dedup chooses for N
// documents (sketch.Config.Resolve); without it, hamming+1; --expected-docs
// with --blocks, or without --sketch simhash, is a usage error.
func TestIndexBuildSimHashExpectedDocs(t *testing.T) {
	const k, n = 6, 1_000_000
	want, err := sketch.Config{Kind: sketch.SimHash, SimHash: sketch.SimHashConfig{K: k}}.Resolve(n)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		flags  []string
		blocks int
	}{
		{"default", nil, k + 1},
		{"sized", []string{"--expected-docs", "1000000"}, want.SimHash.Blocks},
	} {
		dir := filepath.Join(t.TempDir(), "idx")
		args := append([]string{"index", "build", "-q", "--sketch", "simhash", "--hamming", "6", "--data", dir}, c.flags...)
		if code, stdout, stderr := runCLI(t, "", args...); code != ExitOK {
			t.Fatalf("%s: index build: exit %d\n%s%s", c.name, code, stdout, stderr)
		}
		code, stdout, _ := runCLI(t, "", "index", "stats", "--data", dir)
		var st map[string]any
		if code != ExitOK || json.Unmarshal([]byte(stdout), &st) != nil || st["blocks"] != float64(c.blocks) {
			t.Errorf("%s: index stats: exit %d, blocks %v; want %d\n%s", c.name, code, st["blocks"], c.blocks, stdout)
		}
	}
	if want.SimHash.Blocks == k+1 {
		t.Fatalf("the rule takes %d blocks for %d documents, as the default: the test tells nothing", want.SimHash.Blocks, n)
	}
	for _, bad := range [][]string{
		{"--sketch", "simhash", "--expected-docs", "1000", "--blocks", "8"},
		{"--expected-docs", "1000"},
		{"--sketch", "simhash", "--expected-docs", "0"},
	} {
		args := append([]string{"index", "build", "-q", "--data", filepath.Join(t.TempDir(), "idx")}, bad...)
		if code, _, stderr := runCLI(t, "", args...); code != ExitUsage || !strings.Contains(stderr, "expected-docs") {
			t.Errorf("index build %v: exit %d %s; want a usage error naming --expected-docs", bad, code, stderr)
		}
	}
}
