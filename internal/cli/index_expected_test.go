package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/internal/sketch"
)

// TestIndexBuildExpectedDocsCounted: a SimHash index build whose first pass
// counts the documents (--weight tfidf, --boilerplate auto) chooses the
// blocks for that many, as --expected-docs would; --expected-docs given
// wins (without a first pass the blocks stay hamming+1:
// TestIndexBuildSimHashExpectedDocs). The corpus is just big enough that
// the rule takes more than hamming+1 blocks at --hamming 8.
func TestIndexBuildExpectedDocsCounted(t *testing.T) {
	const k = 8
	rule := func(n int64) int {
		r, err := sketch.Config{Kind: sketch.SimHash, SimHash: sketch.SimHashConfig{K: k}}.Resolve(n)
		if err != nil {
			t.Fatal(err)
		}
		return r.SimHash.Blocks
	}
	n := int64(40000)
	if rule(n) == k+1 {
		t.Fatalf("the rule takes %d blocks for %d documents, as the default: the test tells nothing", k+1, n)
	}
	input := filepath.Join(t.TempDir(), "corpus.jsonl")
	f, err := os.Create(input)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range n {
		fmt.Fprintf(w, `{"id":"d%d","text":"note %d on the tides, %d on the winds and %d on the coast"}`+"\n", i, i, i*7, i*13)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, c := range []struct {
		name   string
		flags  []string
		blocks int
	}{
		{"tfidf", []string{"--weight", "tfidf"}, rule(n)},
		{"boilerplate", []string{"--boilerplate", "auto"}, rule(n)},
		{"expected given", []string{"--weight", "tfidf", "--expected-docs", "100"}, rule(100)},
	} {
		dir := filepath.Join(t.TempDir(), "idx")
		args := append([]string{"index", "build", "-q", "--sketch", "simhash", "--hamming", "8", "--data", dir}, c.flags...)
		mustRun(t, append(args, input)...)
		var st struct{ Blocks int }
		if err := json.Unmarshal([]byte(mustRun(t, "index", "stats", "--data", dir)), &st); err != nil || st.Blocks != c.blocks {
			t.Errorf("%s: %d blocks (%v); want %d", c.name, st.Blocks, err, c.blocks)
		}
	}
}
