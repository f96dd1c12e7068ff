package dedup

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/dupid"
)

// articleLines returns the bundled articles, one JSON line each.
func articleLines(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../testdata/articles_1000.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// writeLines writes lines, each ended by a newline, to path.
func writeLines(t *testing.T, path string, lines []string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRepeatedIDs: a document whose id repeats an earlier one's fails the
// run, naming the file and line of both (before, pairs.tsv held the pair
// "t1064 t1064" and kept.jsonl both records); under SkipBad it is a bad
// record: the outputs are byte for byte those of the same input with that
// line unparsable, the counts the same, and BadOut lists it after the
// records skipped while reading.
func TestRepeatedIDs(t *testing.T) {
	ctx := context.Background()
	lines := articleLines(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	dups := slices2(lines)
	dups[4] = `{bad`                                                     // line 5: does not parse
	dups[149] = lines[119]                                               // line 150 repeats line 120 ("t1064"), text and all
	dups[169] = strings.Replace(lines[6], `"text": "`, `"text": "x `, 1) // line 170: line 7's id ("t126"), a near copy of its text
	dups[179] = `{"id": "t1064", "text": "a third t1064"}`               // line 180
	writeLines(t, in, dups)

	out := t.TempDir()
	_, err := Run(ctx, []string{in}, out, &Options{})
	var re *corpus.RecordError
	if !errors.As(err, &re) || re.File != in || re.Line != 5 || errors.Is(err, dupid.ErrDuplicate) {
		t.Fatalf("err = %v; want the record error of line 5 (bad JSON), the first in input order", err)
	}
	// Without the bad line, the first repeated id is the error.
	fixed := slices2(dups)
	fixed[4] = lines[4]
	inFixed := filepath.Join(dir, "fixed.jsonl")
	writeLines(t, inFixed, fixed)
	_, err = Run(ctx, []string{inFixed}, out, &Options{})
	if !errors.As(err, &re) || !errors.Is(err, dupid.ErrDuplicate) || re.File != inFixed || re.Line != 150 ||
		err.Error() != inFixed+`:150: dupid: duplicate id "t1064", first at `+inFixed+":120" {
		t.Fatalf("err = %v; want a duplicate id error at line 150, naming line 120", err)
	}
	if got := dirFiles(t, out); len(got) != 0 {
		t.Errorf("a failed run left %q", keys(got))
	}

	// Under SkipBad, as if the later records did not parse.
	ref := slices2(dups)
	for _, i := range []int{149, 169, 179} {
		ref[i] = `{bad`
	}
	inRef := filepath.Join(dir, "ref.jsonl")
	writeLines(t, inRef, ref)
	refOut, refRep := runDedup(t, []string{inRef}, &Options{Corpus: corpus.Options{SkipBad: true}, Workers: 2})
	for _, workers := range []int{1, 3} {
		bad := filepath.Join(t.TempDir(), "bad.tsv")
		out, rep := runDedup(t, []string{in}, &Options{Corpus: corpus.Options{SkipBad: true}, Workers: workers, BadOut: bad})
		got, want := rep.Counts, refRep.Counts
		got.InputBytes, want.InputBytes = 0, 0 // the lines differ
		if got != want || got.Bad != 4 || got.Documents != 1000 || got.VerifiedPairs != 10 {
			t.Errorf("workers %d: counts %+v; want %+v (4 bad of 1000, the 10 pairs of the articles)", workers, got, want)
		}
		for _, name := range []string{PairsFile, ClustersFile, KeptFile} {
			a, err := os.ReadFile(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(refOut, name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("workers %d: %s differs from the run with those lines unparsable", workers, name)
			}
		}
		log, err := os.ReadFile(bad)
		if err != nil {
			t.Fatal(err)
		}
		wantLog := corpus.BadLogHeader +
			in + "\t5\t4\t-\tcorpus: not valid JSON: expected a key: 'b' at byte 1\n" +
			in + "\t150\t149\t-\tdupid: duplicate id \"t1064\", first at " + in + ":120\n" +
			in + "\t170\t169\t-\tdupid: duplicate id \"t126\", first at " + in + ":7\n" +
			in + "\t180\t179\t-\tdupid: duplicate id \"t1064\", first at " + in + ":120\n"
		if string(log) != wantLog {
			t.Errorf("workers %d: bad-record list:\n%s\nwant\n%s", workers, log, wantLog)
		}
	}

	// BadOut without SkipBad is refused before any work.
	_, err = Run(ctx, []string{in}, t.TempDir(), &Options{BadOut: filepath.Join(dir, "bad.tsv")})
	if !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("BadOut without SkipBad: err = %v; want ErrInvalidOptions", err)
	}
}

func slices2(s []string) []string { return append([]string(nil), s...) }
