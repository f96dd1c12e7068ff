package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
	"github.com/neardup/neardup/simhash"
)

// TestSignSimHash: sign --sketch simhash writes a signature file of the
// simhash kind whose fingerprints read back equal to the library's, TF and
// TF-IDF; the TF-IDF header names the table counted over the inputs (the
// one --df-out writes, and the one a direct count gives), from a file or
// from standard input.
func TestSignSimHash(t *testing.T) {
	texts := []string{
		"the quick brown fox jumps over the lazy dog near the river bank",
		"the quick brown fox jumps over the lazy dog near the river bank today",
		"",
		"an entirely different text about cooking pasta with garlic and olive oil",
	}
	var jsonl bytes.Buffer
	for i, s := range texts {
		jsonl.WriteString(`{"id":"d` + string(rune('0'+i)) + `","text":` + quote(s) + "}\n")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "docs.jsonl")
	if err := os.WriteFile(in, jsonl.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sh := shingle.MustNew(shingle.Prose)
	table, _ := simhash.NewDFTable(simhash.DFOptions{})
	for _, s := range texts {
		table.AddText(sh, []byte(s))
	}
	for _, c := range []struct {
		name  string
		args  []string
		stdin string
		idf   *simhash.IDF
	}{
		{"tf", []string{in}, "", nil},
		{"tfidf", []string{"--weight", "tfidf", "--df-out", filepath.Join(dir, "df-tfidf.bin"), in}, "", table.IDF()},
		{"tfidf-stdin", []string{"--weight", "tfidf", "--df-out", filepath.Join(dir, "df-tfidf-stdin.bin"), "-"}, jsonl.String(), table.IDF()},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "fps.ndsf")
			code, _, stderr := runCLI(t, c.stdin, append([]string{"sign", "-q", "--sketch", "simhash", "-o", out}, c.args...)...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			r, err := sigfile.Open(out, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			want := sigfile.SimHashParams{Weighting: sigfile.TF}
			if c.idf != nil {
				want = sigfile.SimHashParams{Weighting: sigfile.TFIDF, DFFingerprint: c.idf.Fingerprint()}
			}
			h := r.Header()
			if h.Sketch != sigfile.SimHash || h.Words() != 1 || h.SimHash != want {
				t.Fatalf("header %v; want simhash %v", h, want)
			}
			if err := h.CheckSimHash(shingle.Prose, want); err != nil {
				t.Fatal(err)
			}
			hasher := simhash.NewHasher(c.idf)
			var rec sigfile.Record
			for i := 0; ; i++ {
				err := r.Next(&rec)
				if errors.Is(err, io.EOF) {
					if i != len(texts) {
						t.Fatalf("%d fingerprints; want %d", i, len(texts))
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if fp := hasher.FingerprintText(sh, []byte(texts[i])); len(rec.Sig) != 1 || rec.Sig[0] != fp {
					t.Errorf("fingerprint %d: %x; want %x", i, rec.Sig, fp)
				}
			}
			if c.idf == nil {
				return
			}
			data, err := os.ReadFile(filepath.Join(dir, "df-"+c.name+".bin"))
			if err != nil {
				t.Fatal(err)
			}
			var back simhash.DFTable
			if err := back.UnmarshalBinary(data); err != nil || !back.Equal(table) {
				t.Errorf("--df-out: %v; want the table counted over the inputs", err)
			}
		})
	}
	// --df-out only makes sense with a TF-IDF SimHash sign.
	for _, args := range [][]string{{"--df-out", filepath.Join(dir, "x")}, {"--sketch", "simhash", "--df-out", filepath.Join(dir, "x")}} {
		code, _, stderr := runCLI(t, "", append(append([]string{"sign", "-q", "-o", filepath.Join(dir, "o")}, args...), in)...)
		if code != ExitUsage || !strings.Contains(stderr, "--df-out") {
			t.Errorf("%v: exit %d, %q; want a usage error naming --df-out", args, code, stderr)
		}
	}
}
