package dedup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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

// TestRepeatedIDsSpilled is TestRepeatedIDs over three input files (one
// with blank lines), with ids repeated within and across files by exact
// copies, near copies and unrelated texts, under a budget so small that the
// check of repeated ids spills its hashes (64 KiB, which hold 6,144 of the
// 12,000 ids, instead of its sixteenth of the 16 MiB budget) and on one and
// two workers. Without SkipBad
// the run fails naming both lines of the first repeat; under SkipBad the
// outputs are those of the same inputs with the repeating lines unparsable:
// a check that ran after the candidates stage, or not at all, would leave
// the near and exact copies among repeats in pairs.tsv and kept.jsonl.
func TestRepeatedIDsSpilled(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	words := make([]string, 3000)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	text := func() []string {
		ws := make([]string, 25+rng.IntN(20))
		for i := range ws {
			ws[i] = words[rng.IntN(len(words))]
		}
		return ws
	}
	type rec struct {
		id   string
		text []string
	}
	const perFile, files = 4000, 3
	var recs []rec
	for i := range perFile * files {
		r := rec{id: fmt.Sprintf("d%d", i), text: text()}
		if i > 100 && rng.IntN(40) == 0 {
			e := recs[rng.IntN(len(recs))] // an earlier record's id, perhaps in another file
			r.id = e.id
			switch rng.IntN(3) {
			case 0:
				r.text = e.text // an exact copy
			case 1:
				r.text = slices.Clone(e.text) // a near copy
				r.text[rng.IntN(len(r.text))] = "changed"
			}
		} else if i > 100 && rng.IntN(20) == 0 {
			r.text = slices.Clone(recs[rng.IntN(len(recs))].text) // a near copy with its own id
			r.text[0] = "other"
		}
		recs = append(recs, r)
	}
	dir := t.TempDir()
	type where struct {
		file  string
		line  int
		index int
	}
	// write writes the records to three files, line i of the second
	// preceded by a blank line every 97 records; repeat[i] replaces a
	// repeating record with a line that does not parse.
	write := func(name string, unparsable bool) ([]string, []where) {
		var paths []string
		var at []where
		seen := map[string]bool{}
		for f := range files {
			path := filepath.Join(dir, fmt.Sprintf("%s%d.jsonl", name, f))
			var b strings.Builder
			line := 0
			for i := f * perFile; i < (f+1)*perFile; i++ {
				if f == 1 && i%97 == 0 {
					b.WriteString("\n")
					line++
				}
				line++
				r := recs[i]
				at = append(at, where{path, line, i})
				if seen[r.id] && unparsable {
					b.WriteString("{bad\n")
					continue
				}
				seen[r.id] = true
				fmt.Fprintf(&b, "{\"id\": %q, \"text\": %q}\n", r.id, strings.Join(r.text, " "))
			}
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, path)
		}
		return paths, at
	}
	in, at := write("in", false)
	ref, _ := write("ref", true)
	// The expected bad-record list, from a map.
	first := map[string]int{}
	want := corpus.BadLogHeader
	firstDup := -1
	for i, r := range recs {
		f, ok := first[r.id]
		if !ok {
			first[r.id] = i
			continue
		}
		if firstDup < 0 {
			firstDup = i
		}
		want += fmt.Sprintf("%s\t%d\t%d\t-\tdupid: duplicate id %q, first at %s:%d\n", at[i].file, at[i].line, i, r.id, at[f].file, at[f].line)
	}
	if firstDup < 0 {
		t.Fatal("no repeated id generated")
	}
	const memory = 16 << 20
	defer func(f func(int64) int64) { idCheckMemory = f }(idCheckMemory)
	idCheckMemory = func(int64) int64 { return 64 << 10 }
	for _, workers := range []int{1, 2} {
		_, err := Run(ctx, in, t.TempDir(), &Options{Workers: workers, Memory: memory})
		var re *corpus.RecordError
		d, f := at[firstDup], at[first[recs[firstDup].id]]
		wantErr := fmt.Sprintf("%s:%d: dupid: duplicate id %q, first at %s:%d", d.file, d.line, recs[firstDup].id, f.file, f.line)
		if !errors.As(err, &re) || !errors.Is(err, dupid.ErrDuplicate) || err.Error() != wantErr {
			t.Fatalf("workers %d: err = %v; want %s", workers, err, wantErr)
		}
		bad := filepath.Join(t.TempDir(), "bad.tsv")
		o := &Options{Corpus: corpus.Options{SkipBad: true}, Workers: workers, Memory: memory, BadOut: bad}
		out, rep := runDedup(t, in, o)
		refOut, refRep := runDedup(t, ref, &Options{Corpus: corpus.Options{SkipBad: true}, Workers: workers, Memory: memory})
		got, wantCounts := rep.Counts, refRep.Counts
		got.InputBytes, wantCounts.InputBytes = 0, 0
		if got != wantCounts || got.VerifiedPairs == 0 {
			t.Errorf("workers %d: counts %+v; want %+v", workers, got, wantCounts)
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
			if name == KeptFile {
				// The kept records are the same, from files of other names.
				a, b = bytes.ReplaceAll(a, []byte("\"in"), nil), bytes.ReplaceAll(b, []byte("\"ref"), nil)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("workers %d: %s differs from the run with the repeating lines unparsable", workers, name)
			}
		}
		log, err := os.ReadFile(bad)
		if err != nil {
			t.Fatal(err)
		}
		if string(log) != want {
			t.Errorf("workers %d: bad-record list:\n%.2000s\nwant\n%.2000s", workers, log, want)
		}
	}
}
