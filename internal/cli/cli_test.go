package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
)

var update = flag.Bool("update", false, "rewrite the golden CLI outputs in ../../testdata/golden/cli")

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, IO{In: strings.NewReader(stdin), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

const sample = "../../testdata/articles_1000.jsonl"

// TestDedupGolden runs the README's command on the bundled sample and
// compares pairs.tsv and clusters.jsonl with golden files.
func TestDedupGolden(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "", "dedup", "-o", out, sample)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "verified pairs 10") || !strings.Contains(stdout, "removed 10") {
		t.Errorf("summary %q; want 10 verified pairs, 10 removed", stdout)
	}
	for _, name := range []string{"pairs.tsv", "clusters.jsonl"} {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("../../testdata/golden/cli/dedup-articles_1000", name)
		if *update {
			os.MkdirAll(filepath.Dir(golden), 0o755)
			os.WriteFile(golden, got, 0o644)
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update once)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s:\n%s", name, golden, got)
		}
	}
	for _, name := range []string{"kept.jsonl", "report.json"} {
		if st, err := os.Stat(filepath.Join(out, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", name, err)
		}
	}
}

func TestDedupStdinEqualsFile(t *testing.T) {
	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	a, b := t.TempDir(), t.TempDir()
	if code, _, stderr := runCLI(t, "", "dedup", "-q", "-o", a, sample); code != 0 {
		t.Fatal(stderr)
	}
	// Standard input is the IO's: Main reads IO.In for "-".
	code, _, stderr := runCLI(t, string(data), "dedup", "-q", "-o", b, "-")
	if code != 0 {
		t.Fatal(stderr)
	}
	for _, name := range []string{"pairs.tsv", "clusters.jsonl", "kept.jsonl"} {
		x, _ := os.ReadFile(filepath.Join(a, name))
		y, _ := os.ReadFile(filepath.Join(b, name))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between file and stdin input", name)
		}
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"id\":\"a\",\"text\":\"x\"}\n{\"id\":\"b\",\"text\":\n"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"dedup", sample}, ExitUsage, "--out is required"},
		{[]string{"dedup", "-o", dir}, ExitUsage, "requires at least 1 arg"},
		{[]string{"dedup", "-o", dir, "--threshold", "1.5", sample}, ExitUsage, "threshold"},
		{[]string{"dedup", "-o", dir, "--shingle", "sentence:3", sample}, ExitUsage, "sentence"},
		{[]string{"dedup", "-o", dir, "--no-such-flag", sample}, ExitUsage, "no-such-flag"},
		{[]string{"dedup", "-o", dir, "--memory", "lots", sample}, ExitUsage, "lots"},
		{[]string{"dedup", "-o", dir, "--bands", "4", sample}, ExitUsage, "--bands and --rows"},
		{[]string{"dedup", "-o", dir, filepath.Join(dir, "missing.jsonl")}, ExitFailure, "missing.jsonl"},
		{[]string{"dedup", "-o", filepath.Join(dir, "o"), bad}, ExitFailure, "bad.jsonl:2"},
		{[]string{"sign", sample}, ExitUsage, "--out is required"},
	} {
		code, _, stderr := runCLI(t, "", tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
	code, stdout, _ := runCLI(t, "", "dedup", "--help")
	if code != 0 || !strings.Contains(stdout, "EXIT STATUS") {
		t.Errorf("help: exit %d, no EXIT STATUS section", code)
	}
}

// TestSign: one signature per document, in input order, with its id, equal
// to the library's signature, and refused under another spec.
func TestSign(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sigs.bin")
	code, _, stderr := runCLI(t, "", "sign", "--workers", "2", "--bits", "8", "-o", out, sample)
	if code != 0 {
		t.Fatal(stderr)
	}
	r, err := sigfile.Open(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := minhash.Params{Bits: 8}
	sh := shingle.MustNew(shingle.Prose)
	h := minhash.MustNewHasher(p)
	data, _ := os.ReadFile(sample)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var rec sigfile.Record
	for i := 0; ; i++ {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			if i != len(lines) {
				t.Fatalf("%d signatures; want %d", i, len(lines))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var want struct{ ID, Text string }
		jsonUnmarshal(t, lines[i], &want)
		if string(rec.ID) != want.ID {
			t.Fatalf("signature %d has id %q; want %q", i, rec.ID, want.ID)
		}
		if w := h.SignText(nil, sh, []byte(want.Text)); !slicesEqual(w, rec.Sig) {
			t.Fatalf("signature %d differs from the library's", i)
		}
	}
	if err := r.CheckMinHash(shingle.Code, p); !errors.Is(err, sigfile.ErrSpecMismatch) {
		t.Errorf("checking against another spec: err = %v; want ErrSpecMismatch", err)
	}
}

func jsonUnmarshal(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatal(err)
	}
}

func slicesEqual(a, b []uint64) bool { return slices.Equal(a, b) }
