package dedup

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/jobspec"
)

// TestSignaturesRepeatedIDs: under SkipBad, the later occurrence of a
// repeated id is a bad record, and neardup sign leaves it out of its
// signature file. --signatures-out leaves it out too (before, it wrote its
// record, so the file differed from sign's), and --signatures reads such a
// file, the outputs those of signing again (before, the missing record
// failed the run as a stored file of other ids). A record missing for a
// document whose id is not repeated is still refused.
func TestSignaturesRepeatedIDs(t *testing.T) {
	all, _, _ := splitCorpus(t)
	dir := t.TempDir()
	repeat := doc{all[3].ID, "another text under the same id " + all[7].Text}
	withRepeat := slices.Insert(slices.Clone(all), 10, repeat)
	in := filepath.Join(dir, "in.jsonl")
	writeJSONL(t, in, withRepeat)
	want := filepath.Join(dir, "want.ndsf")
	writeSigs(t, want, all, &Options{}) // sign's file: the repeated id's later record left out

	got := filepath.Join(dir, "got.ndsf")
	signed, rep := runDedup(t, []string{in}, &Options{Corpus: corpus.Options{SkipBad: true}, SignaturesOut: got})
	if rep.Counts.Bad != 1 {
		t.Fatalf("%d bad documents; want the repeated id's later record", rep.Counts.Bad)
	}
	x, _ := os.ReadFile(want)
	y, _ := os.ReadFile(got)
	if !bytes.Equal(x, y) {
		t.Fatalf("--signatures-out under SkipBad wrote %d bytes; neardup sign's file has %d, or other bytes", len(y), len(x))
	}

	stored, _ := runDedup(t, []string{in}, &Options{Corpus: corpus.Options{SkipBad: true}, Signatures: want})
	for _, f := range []string{PairsFile, ClustersFile, KeptFile} {
		p, _ := os.ReadFile(filepath.Join(signed, f))
		q, _ := os.ReadFile(filepath.Join(stored, f))
		if !bytes.Equal(p, q) {
			t.Errorf("%s differs between signing and --signatures with a repeated id", f)
		}
	}

	short := filepath.Join(dir, "short.ndsf")
	writeSigs(t, short, slices.Delete(slices.Clone(all), 20, 21), &Options{})
	_, err := Run(context.Background(), []string{in}, t.TempDir(), &Options{Corpus: corpus.Options{SkipBad: true}, Signatures: short})
	if !errors.Is(err, jobspec.ErrStoredSignatures) || !strings.Contains(err.Error(), all[20].ID) || !strings.Contains(err.Error(), "not a repeated id") {
		t.Errorf("a record missing for a document not repeated: %v; want %v naming %q", err, jobspec.ErrStoredSignatures, all[20].ID)
	}
}
