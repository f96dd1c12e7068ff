package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
)

// TestIndexMigrate bulk-builds an index of 4-byte keys (an empty one made
// so, filled by `index build --append`), migrates it with `neardup index
// migrate`, and checks the summary, the new width, that every answer is the
// same and that index check finds it consistent; a second migrate, and one
// without --data, fail with a message.
func TestIndexMigrate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	x, err := index.Open(dir, &index.Options{CacheSize: 8 << 20, BucketKeyBytes: index.NarrowKeyBytes})
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	mustRun(t, "index", "build", "-q", "--append", "--data", dir, sample)
	if w := keyBytes(t, dir); w != index.NarrowKeyBytes {
		t.Fatalf("built index has %d-byte keys; want 4", w)
	}
	docs := signSample(t, dir)
	want := queryAll(t, dir, docs)

	out := mustRun(t, "index", "migrate", "--data", dir)
	if re := `^migrated .*idx: \d+ documents, bucket keys 4 → 8 bytes \(layout version 3, postings packed\)\n$`; !regexp.MustCompile(re).MatchString(out) {
		t.Errorf("summary %q; want it to match %q", out, re)
	}
	x, err = index.Open(dir, &index.Options{CacheSize: 8 << 20, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if w := x.Config().BucketKeyBytes; w != index.WideKeyBytes {
		t.Errorf("migrated index has %d-byte keys; want 8", w)
	}
	x.Close()
	if got := queryAll(t, dir, docs); got != want {
		t.Error("answers differ after the migration")
	}
	mustRun(t, "index", "check", "--data", dir)

	code, _, stderr := runCLI(t, "", "index", "migrate", "--data", dir)
	if code == ExitOK || !strings.Contains(stderr, "nothing to migrate") {
		t.Errorf("second migrate: exit %d, %q; want a failure saying there is nothing to migrate", code, stderr)
	}
	if code, _, _ := runCLI(t, "", "index", "migrate"); code != ExitUsage {
		t.Errorf("migrate without --data: exit %d; want %d", code, ExitUsage)
	}
}
