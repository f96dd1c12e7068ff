package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
)

// TestIndexMigrate bulk-builds an index (4-byte keys), migrates it with
// `neardup index migrate`, and checks the summary, the new width, that
// every answer is the same and that index check finds it consistent; a
// second migrate, and one without --data, fail with a message.
func TestIndexMigrate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	mustRun(t, "index", "build", "-q", "--data", dir, sample)
	docs := signSample(t, dir)
	want := queryAll(t, dir, docs)

	out := mustRun(t, "index", "migrate", "--data", dir)
	if re := `^migrated .*idx: \d+ documents, bucket keys 4 → 8 bytes \(layout version 3, postings packed\)\n$`; !regexp.MustCompile(re).MatchString(out) {
		t.Errorf("summary %q; want it to match %q", out, re)
	}
	x, err := index.Open(dir, &index.Options{CacheSize: 8 << 20, ReadOnly: true})
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

// signSample signs the bundled sample under the configuration of the index
// at dir.
func signSample(t *testing.T, dir string) []index.Doc {
	t.Helper()
	x, err := index.Open(dir, &index.Options{CacheSize: 8 << 20, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	signer, err := x.Config().NewSigner()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	var docs []index.Doc
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct{ ID, Text string }
		jsonUnmarshal(t, line, &rec)
		if sig, empty := signer.Sign(nil, []byte(rec.Text)); !empty {
			docs = append(docs, index.Doc{ID: rec.ID, Sig: sig})
		}
	}
	return docs
}
