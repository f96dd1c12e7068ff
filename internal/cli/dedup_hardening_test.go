package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
)

// TestDedupRepeatedIDs: dedup refuses a repeated id, naming the file and
// line of its second occurrence and of its first (exit 1, no output; before,
// pairs.tsv held "t120<TAB>t120" and kept.jsonl both records), and under
// --skip-bad leaves the later records out, counts them as bad and lists them
// in --bad-out.
func TestDedupRepeatedIDs(t *testing.T) {
	dir := t.TempDir()
	in := writeJSONL(t, dir, 200, func(l int) string {
		switch l {
		case 150: // repeats line 120's id and text
			return `{"id":"t120","text":"the quick brown fox 60 jumps over the lazy dog 60 near the river bank"}`
		case 170:
			return `{"id":"t7","text":"another text"}`
		case 180:
			return `{"id":"t120","text":"a third t120"}`
		}
		return ""
	})
	out := filepath.Join(dir, "out")
	code, _, stderr := runCLI(t, "", "dedup", "-q", "--workers", "2", "--threshold", "0.5", "-o", out, in)
	if code != ExitFailure || !strings.Contains(stderr, in+`:150: dupid: duplicate id "t120", first at `+in+":120") {
		t.Errorf("exit %d, stderr %q; want exit 1 naming line 150 and line 120", code, stderr)
	}
	onlyFiles(t, out)

	badOut := filepath.Join(dir, "bad.tsv")
	code, stdout, stderr := runCLI(t, "", "dedup", "-q", "--workers", "2", "--threshold", "0.5", "--skip-bad", "--bad-out", badOut, "-o", out, in)
	if code != ExitOK {
		t.Fatalf("--skip-bad: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "documents 200 (empty 0, bad 3, ") {
		t.Errorf("summary %q; want 200 documents, 3 bad", stdout)
	}
	pairs, err := os.ReadFile(filepath.Join(out, "pairs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(pairs), "t120\tt120") || !strings.Contains(string(pairs), "t120\tt121\t") {
		t.Errorf("pairs.tsv lists t120 with itself, or not with t121:\n%s", pairs)
	}
	kept, err := os.ReadFile(filepath.Join(out, "kept.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(kept), "a third t120") || strings.Contains(string(kept), "another text") {
		t.Errorf("kept.jsonl holds a record skipped for its repeated id")
	}
	log, err := os.ReadFile(badOut)
	if err != nil {
		t.Fatal(err)
	}
	want := corpus.BadLogHeader +
		in + "\t150\t149\t-\tdupid: duplicate id \"t120\", first at " + in + ":120\n" +
		in + "\t170\t169\t-\tdupid: duplicate id \"t7\", first at " + in + ":7\n" +
		in + "\t180\t179\t-\tdupid: duplicate id \"t120\", first at " + in + ":120\n"
	if string(log) != want {
		t.Errorf("--bad-out:\n%s\nwant\n%s", log, want)
	}

	// Across inputs: the second occurrence in one file, the first in another.
	other := filepath.Join(t.TempDir(), "other.jsonl")
	os.WriteFile(other, []byte(`{"id":"u1","text":"one"}`+"\n"+`{"id":"u2","text":"two"}`+"\n"+`{"id":"t7","text":"three"}`+"\n"), 0o644)
	first := writeJSONL(t, t.TempDir(), 10, nil)
	code, _, stderr = runCLI(t, "", "dedup", "-q", "-o", filepath.Join(dir, "out2"), first, other)
	if code != ExitFailure || !strings.Contains(stderr, other+`:3: dupid: duplicate id "t7", first at `+first+":7") {
		t.Errorf("exit %d, stderr %q; want exit 1 naming %s:3 and %s:7", code, stderr, other, first)
	}
}

// TestDedupBadOut: dedup's --bad-out lists the records --skip-bad skipped
// while reading (too large, not parsing), in input order, as sign's does,
// in a file written only with the outputs; without --skip-bad it is a usage
// error.
func TestDedupBadOut(t *testing.T) {
	dir := t.TempDir()
	in := writeJSONL(t, dir, 3000, func(l int) string {
		switch {
		case l == 5:
			return `{"id":"t5","text":"` + strings.Repeat("long ", 100) + `"}`
		case l%1000 == 7:
			return `{"id":"x","body":"no text field"}`
		case l == 2999:
			return `[1,2]`
		}
		return ""
	})
	want := corpus.BadLogHeader +
		in + "\t5\t4\t-\tcorpus: record too large: 521 bytes, over MaxRecordBytes (300)\n" +
		in + "\t7\t6\ttext\tcorpus: missing field\n" +
		in + "\t1007\t1006\ttext\tcorpus: missing field\n" +
		in + "\t2007\t2006\ttext\tcorpus: missing field\n" +
		in + "\t2999\t2998\t-\tcorpus: not a JSON object: found an array\n"
	outDir := filepath.Join(dir, "out")
	bad := filepath.Join(dir, "bad.tsv")
	args := []string{"dedup", "-q", "--workers", "2", "--max-record-bytes", "300", "-o", outDir, "--bad-out", bad, in}
	code, _, stderr := runCLI(t, "", args...)
	if code != ExitUsage || !strings.Contains(stderr, "--skip-bad") {
		t.Errorf("--bad-out without --skip-bad: exit %d, %q; want 2 saying to give --skip-bad", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "", append(args, "--skip-bad")...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "documents 3000 (empty 0, bad 5, ") {
		t.Errorf("summary %q; want 3000 documents, 5 bad", stdout)
	}
	got, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("--bad-out:\n%s\nwant\n%s", got, want)
	}
	onlyFiles(t, dir, "bad.tsv", "docs.jsonl", "out")

}

// TestDedupKeepFieldWarning: --keep field:NAME with a field that no record
// holds warns on stderr and in report.json (every cluster then keeps its
// first document); a field that some record holds does not warn.
func TestDedupKeepFieldWarning(t *testing.T) {
	in := filepath.Join(t.TempDir(), "keep.jsonl")
	os.WriteFile(in, []byte(`{"id":"a","text":"the quick brown fox jumps over the lazy dog","views":5}`+"\n"+
		`{"id":"b","text":"the quick brown fox jumps over the lazy dog today"}`+"\n"), 0o644)
	for _, tc := range []struct {
		keep string
		warn bool
	}{{"field:nosuch", true}, {"field:views", false}, {"first", false}} {
		out := t.TempDir()
		code, _, stderr := runCLI(t, "", "dedup", "-q", "--threshold", "0.5", "--keep", tc.keep, "-o", out, in)
		if code != ExitOK {
			t.Fatalf("--keep %s: exit %d: %s", tc.keep, code, stderr)
		}
		const msg = `keep field "nosuch" is in no record: every cluster keeps its first document`
		if got := strings.Contains(stderr, "neardup: warning: "+msg); got != tc.warn {
			t.Errorf("--keep %s: stderr %q; want the warning: %v", tc.keep, stderr, tc.warn)
		}
		data, err := os.ReadFile(filepath.Join(out, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rep dedup.Report
		jsonUnmarshal(t, string(data), &rep)
		if got := slices.Equal(rep.Warnings, []string{msg}); got != tc.warn || !tc.warn && len(rep.Warnings) > 0 {
			t.Errorf("--keep %s: report.json warnings %q; want the warning: %v", tc.keep, rep.Warnings, tc.warn)
		}
	}
}
