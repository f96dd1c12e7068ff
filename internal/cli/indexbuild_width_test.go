package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
)

// TestIndexBuildKeyWidth: `index build` makes an index of 8-byte bucket keys
// (layout version 3) that answers every query as an index the service fills
// by inserts does, and index check finds it consistent; `--append` into an
// index of 4-byte keys keeps them, empty (a bulk build) or not (inserts).
func TestIndexBuildKeyWidth(t *testing.T) {
	tmp := t.TempDir()
	built, online := filepath.Join(tmp, "built"), filepath.Join(tmp, "online")
	mustRun(t, "index", "build", "-q", "--data", built, sample)
	docs := fillOnline(t, online, index.Options{})
	for _, dir := range []string{built, online} {
		if w := keyBytes(t, dir); w != index.WideKeyBytes {
			t.Errorf("%s: %d-byte keys; want %d", filepath.Base(dir), w, index.WideKeyBytes)
		}
		mustRun(t, "index", "check", "--data", dir)
	}
	want := queryAll(t, online, docs)
	if got := queryAll(t, built, docs); got != want {
		t.Error("the built index answers otherwise than the one filled by inserts")
	}

	// An index of 4-byte keys, empty: --append bulk-builds it, keeping them.
	narrow := filepath.Join(tmp, "narrow")
	x, err := index.Open(narrow, &index.Options{CacheSize: 8 << 20, BucketKeyBytes: index.NarrowKeyBytes})
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	mustRun(t, "index", "build", "-q", "--append", "--data", narrow, sample)
	if w := keyBytes(t, narrow); w != index.NarrowKeyBytes {
		t.Errorf("bulk-built by --append: %d-byte keys; want %d", w, index.NarrowKeyBytes)
	}
	// Not empty: --append inserts, with its keys.
	more := filepath.Join(tmp, "more.jsonl")
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, `{"id":"more%d","text":"an appended document number %d, with words enough to be shingled, and some more of them"}`+"\n", i, i)
	}
	if err := os.WriteFile(more, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, "index", "build", "-q", "--append", "--data", narrow, more); !strings.HasPrefix(out, "appended 20 documents") {
		t.Errorf("append: %q", out)
	}
	if w := keyBytes(t, narrow); w != index.NarrowKeyBytes {
		t.Errorf("appended to: %d-byte keys; want %d", w, index.NarrowKeyBytes)
	}
	mustRun(t, "index", "check", "--data", narrow)
	if got := queryAll(t, narrow, docs); got != want {
		t.Error("the index of 4-byte keys answers otherwise than the one of 8-byte keys")
	}
}
