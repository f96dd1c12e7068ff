package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// againstCorpus writes halves A and B of a corpus: the bundled articles
// split in two, B with near copies (a few words cut) of A's articles and of
// its own, so that B has pairs with A and within itself.
func againstCorpus(t *testing.T) (a, b string) {
	t.Helper()
	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	var docs []struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	}
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var d struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	write := func(name string, lines []string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	enc := func(id, text string) string {
		b, _ := json.Marshal(map[string]string{"id": id, "text": text})
		return string(b)
	}
	var la, lb []string
	for i, d := range docs {
		if i < 500 {
			la = append(la, enc(d.ID, d.Text))
		} else {
			lb = append(lb, enc(d.ID, d.Text))
		}
		if i%7 == 0 { // a near copy in B, of an A or a B article
			w := strings.Fields(d.Text)
			lb = append(lb, enc(fmt.Sprintf("%s-copy", d.ID), strings.Join(w[:len(w)-len(w)/30], " ")))
		}
	}
	return write("a.jsonl", la), write("b.jsonl", lb)
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, "", args...)
	if code != ExitOK {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	return stdout
}

func sameFiles(t *testing.T, what, x, y string, names ...string) {
	t.Helper()
	for _, n := range names {
		p, err := os.ReadFile(filepath.Join(x, n))
		if err != nil {
			t.Fatal(err)
		}
		q, err := os.ReadFile(filepath.Join(y, n))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p, q) {
			t.Errorf("%s: %s differs", what, n)
		}
	}
}

// TestSignOnceUseMany is the README's incremental workflow on the command
// line: neardup sign's file is byte for byte what dedup --signatures-out
// writes; dedup --signatures gives the outputs of signing; dedup --against
// a signature file and --against an index built from the same corpus find
// the same pairs, none within A, and the summary says what the reference
// removed; signatures of another seed are refused with both fingerprints.
func TestSignOnceUseMany(t *testing.T) {
	a, b := againstCorpus(t)
	dir := t.TempDir()
	sigsA := filepath.Join(dir, "a.ndsf")
	mustRun(t, "sign", "-q", "-o", sigsA, a)
	plain := filepath.Join(dir, "plain")
	byDedup := filepath.Join(dir, "a-dedup.ndsf")
	mustRun(t, "dedup", "-q", "--signatures-out", byDedup, "-o", plain, a)
	x, _ := os.ReadFile(sigsA)
	y, _ := os.ReadFile(byDedup)
	if len(x) == 0 || !bytes.Equal(x, y) {
		t.Fatalf("dedup --signatures-out wrote %d bytes; neardup sign %d, or other bytes", len(y), len(x))
	}
	stored := filepath.Join(dir, "stored")
	mustRun(t, "dedup", "-q", "--signatures", sigsA, "-o", stored, a)
	sameFiles(t, "--signatures", plain, stored, "pairs.tsv", "clusters.jsonl", "kept.jsonl")

	idx := filepath.Join(dir, "idx")
	mustRun(t, "index", "build", "--data", idx, a)
	bySigs, byIndex := filepath.Join(dir, "by-sigs"), filepath.Join(dir, "by-index")
	summary := mustRun(t, "dedup", "-q", "--against", sigsA, "-o", bySigs, b)
	mustRun(t, "dedup", "-q", "--against", idx, "-o", byIndex, b)
	sameFiles(t, "--against index and signatures", bySigs, byIndex, "pairs.tsv", "clusters.jsonl", "kept.jsonl")
	if !strings.Contains(summary, "reference documents 500") || !strings.Contains(summary, "verified estimate") {
		t.Errorf("summary %q; want the 500 reference documents and their pairs verified by the estimate", summary)
	}
	idsA := map[string]bool{}
	data, _ := os.ReadFile(a)
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var d struct{ ID string }
		json.Unmarshal([]byte(l), &d)
		idsA[d.ID] = true
	}
	pairs, _ := os.ReadFile(filepath.Join(bySigs, "pairs.tsv"))
	var withA int
	for _, l := range strings.Split(strings.TrimSpace(string(pairs)), "\n") {
		f := strings.Split(l, "\t")
		switch {
		case idsA[f[0]] && idsA[f[1]]:
			t.Errorf("pair %q: two reference documents", l)
		case idsA[f[0]] || idsA[f[1]]:
			withA++
			if f[3] != "-" {
				t.Errorf("pair %q with a reference document known by its signature has an exact similarity", l)
			}
		}
	}
	if withA < 50 {
		t.Errorf("%d pairs with A (estimated); want the ~70 copies of A's articles", withA)
	}

	code, _, stderr := runCLI(t, "", "dedup", "-q", "--seed", "3", "--against", sigsA, "-o", filepath.Join(dir, "seed"), b)
	if code != ExitFailure || !strings.Contains(stderr, "seed=0") || !strings.Contains(stderr, "seed=3") || !strings.Contains(stderr, "fingerprint") {
		t.Errorf("--seed 3 against seed-0 signatures: exit %d, %q; want exit 1 naming both params and fingerprints", code, stderr)
	}
}

// TestIndexBuildSignatures: index build --signatures fills an index from a
// signature file, taking its spec and params (the index of the signatures
// of a corpus holds what the index of the corpus holds); --append adds to
// it durably and, run again, finds everything present; without --append a
// non-empty index is refused with the hint; flags that disagree with the
// file, and INPUT beside --signatures, are usage errors.
func TestIndexBuildSignatures(t *testing.T) {
	a, b := againstCorpus(t)
	dir := t.TempDir()
	sigsA, sigsB := filepath.Join(dir, "a.ndsf"), filepath.Join(dir, "b.ndsf")
	mustRun(t, "sign", "-q", "--bits", "16", "-o", sigsA, a)
	mustRun(t, "sign", "-q", "--bits", "16", "-o", sigsB, b)
	idx := filepath.Join(dir, "idx")
	out := mustRun(t, "index", "build", "-q", "--data", idx, "--signatures", sigsA)
	if !strings.Contains(out, "indexed 500 documents") || !strings.Contains(out, "bits=16") {
		t.Errorf("build --signatures: %q; want 500 documents under 16-bit params", out)
	}
	fromText := filepath.Join(dir, "text")
	mustRun(t, "index", "build", "-q", "--bits", "16", "--data", fromText, a)
	st1 := mustRun(t, "index", "stats", "--data", idx)
	st2 := mustRun(t, "index", "stats", "--data", fromText)
	if st1 != st2 || !strings.Contains(st1, `"documents": 500`) {
		t.Errorf("stats of the index of the signatures:\n%s\nof the index of the texts:\n%s", st1, st2)
	}

	code, _, stderr := runCLI(t, "", "index", "build", "--data", idx, "--signatures", sigsB)
	if code != ExitFailure || !strings.Contains(stderr, "--append") {
		t.Errorf("build into a non-empty index: exit %d, %q; want exit 1 suggesting --append", code, stderr)
	}
	out = mustRun(t, "index", "build", "-q", "--data", idx, "--append", "--signatures", sigsB)
	if !strings.Contains(out, "appended") || !strings.Contains(out, "(0 already present") {
		t.Errorf("append: %q", out)
	}
	out = mustRun(t, "index", "build", "-q", "--data", idx, "--append", "--signatures", sigsB)
	if !strings.Contains(out, "appended 0 documents") {
		t.Errorf("append again: %q; want nothing appended", out)
	}
	if out := mustRun(t, "index", "check", "--data", idx); !strings.Contains(out, "problems 0") {
		t.Errorf("check after append: %q", out)
	}
	for _, args := range [][]string{
		{"index", "build", "--data", filepath.Join(dir, "x"), "--signatures", sigsA, a},
		{"index", "build", "--data", filepath.Join(dir, "y"), "--seed", "3", "--signatures", sigsA},
	} {
		if code, _, stderr := runCLI(t, "", args...); code != ExitUsage {
			t.Errorf("%v: exit %d, %q; want 2", args, code, stderr)
		}
	}
}

// TestIndexAppendRepeatedIDs: index build --append checks INPUT for
// repeated ids as a build does, before appending anything: a repeated id
// fails naming both lines and leaves the index as it was; with --skip-bad
// the later record is skipped and listed in --bad-out (before, the append
// took the repeat as already present, and --bad-out was never written).
func TestIndexAppendRepeatedIDs(t *testing.T) {
	a, b := againstCorpus(t)
	dir := t.TempDir()
	data, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	lines = append(lines, lines[1]) // the last line repeats line 2
	c := filepath.Join(dir, "c.jsonl")
	if err := os.WriteFile(c, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(dir, "idx")
	mustRun(t, "index", "build", "-q", "--data", idx, a)
	before := mustRun(t, "index", "stats", "--data", idx)

	code, _, stderr := runCLI(t, "", "index", "build", "-q", "--data", idx, "--append", c)
	if code != ExitFailure || !strings.Contains(stderr, fmt.Sprintf("c.jsonl:%d", len(lines))) || !strings.Contains(stderr, "c.jsonl:2") {
		t.Errorf("append of a repeated id: exit %d, %q; want 1 naming c.jsonl:%d and c.jsonl:2", code, stderr, len(lines))
	}
	if after := mustRun(t, "index", "stats", "--data", idx); after != before {
		t.Errorf("a refused append changed the index:\n%s\nwas\n%s", after, before)
	}

	bad := filepath.Join(dir, "bad.tsv")
	out := mustRun(t, "index", "build", "-q", "--data", idx, "--append", "--skip-bad", "--bad-out", bad, c)
	if !strings.Contains(out, "1 bad") {
		t.Errorf("append under --skip-bad: %q; want 1 bad", out)
	}
	got, err := os.ReadFile(bad)
	if err != nil || !strings.Contains(string(got), fmt.Sprintf("c.jsonl\t%d\t", len(lines))) {
		t.Errorf("--bad-out: %q, %v; want the record of line %d", got, err, len(lines))
	}
}

// TestIndexAppendPromoted: --append to an index that index promote
// replaced is refused naming its replacement (before, it appended to an
// index serve refuses).
func TestIndexAppendPromoted(t *testing.T) {
	a, b := againstCorpus(t)
	dir := t.TempDir()
	idx := filepath.Join(dir, "idx")
	mustRun(t, "index", "build", "-q", "--data", idx, a)
	marker := `{"shadow":"/elsewhere/shadow","time":"2026-11-26T03:00:00Z"}`
	if err := os.WriteFile(filepath.Join(idx, promotedName), []byte(marker), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", "index", "build", "-q", "--data", idx, "--append", b)
	if code != ExitFailure || !strings.Contains(stderr, "/elsewhere/shadow") {
		t.Errorf("append to a promoted index: exit %d, %q; want 1 naming its replacement", code, stderr)
	}
}
