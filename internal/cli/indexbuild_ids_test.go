package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
)

// TestIndexBuildRepeatedIDs: index build refuses a repeated id naming the
// file and line of both occurrences (before: the id only, from the index's
// sorted ids), and under --skip-bad skips the later records, counts them as
// bad and lists them in --bad-out, written only on success.
func TestIndexBuildRepeatedIDs(t *testing.T) {
	dir := t.TempDir()
	in := writeJSONL(t, dir, 200, func(l int) string {
		switch l {
		case 150:
			return `{"id":"t120","text":"the quick brown fox 60 jumps over the lazy dog 60 near the river bank"}`
		case 170:
			return `{"id":"t7","text":"another text, long enough to have a shingle"}`
		}
		return ""
	})
	code, _, stderr := runCLI(t, "", "index", "build", "-q", "--data", filepath.Join(dir, "idx1"), in)
	if code != ExitFailure || !strings.Contains(stderr, in+`:150: dupid: duplicate id "t120", first at `+in+":120") {
		t.Errorf("exit %d, stderr %q; want exit 1 naming line 150 and line 120", code, stderr)
	}

	bad := filepath.Join(dir, "bad.tsv")
	args := []string{"index", "build", "-q", "--data", filepath.Join(dir, "idx2"), "--bad-out", bad, in}
	if code, _, stderr := runCLI(t, "", args...); code != ExitUsage || !strings.Contains(stderr, "--skip-bad") {
		t.Errorf("--bad-out without --skip-bad: exit %d, %q; want 2 saying to give --skip-bad", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "", append(args, "--skip-bad")...)
	if code != ExitOK || !strings.Contains(stdout, "indexed 198 documents (0 without shingles skipped, 2 bad)") {
		t.Fatalf("--skip-bad: exit %d, stdout %q, stderr %q; want 198 documents indexed, 2 bad", code, stdout, stderr)
	}
	log, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	want := corpus.BadLogHeader +
		in + "\t150\t149\t-\tdupid: duplicate id \"t120\", first at " + in + ":120\n" +
		in + "\t170\t169\t-\tdupid: duplicate id \"t7\", first at " + in + ":7\n"
	if string(log) != want {
		t.Errorf("--bad-out:\n%s\nwant\n%s", log, want)
	}
}
