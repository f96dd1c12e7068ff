package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
)

// TestSignVariants runs sign with the sketch flags, standard input and
// output, a zstd input and an empty id, and checks every signature against
// the library's for the same spec and params, in input order.
func TestSignVariants(t *testing.T) {
	docs := []struct{ id, text string }{
		{"a", "the quick brown fox jumps over the lazy dog near the river bank"},
		{"", "an empty id is still an id: it must survive the round trip"},
		{"c", "短い日本語のテキストも署名できる"},
		{"d", ""},
		{"e", "the quick brown fox jumps over the lazy dog near the river"},
	}
	var jsonl bytes.Buffer
	for _, d := range docs {
		jsonl.WriteString(`{"id":` + quote(d.id) + `,"text":` + quote(d.text) + "}\n")
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, "docs.jsonl")
	if err := os.WriteFile(plain, jsonl.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	zst := filepath.Join(dir, "docs.jsonl.zst")
	enc, _ := zstd.NewWriter(nil)
	if err := os.WriteFile(zst, enc.EncodeAll(jsonl.Bytes(), nil), 0o644); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name   string
		args   []string
		stdin  string
		stdout bool // signatures on standard output (-o -)
		spec   string
		params minhash.Params
	}{
		{"defaults", []string{plain}, "", false, "prose", minhash.Params{}},
		{"char5-khash-k64", []string{"--shingle", "char:5", "--scheme", "khash", "--num-perm", "64", plain}, "", false,
			"char:5", minhash.Params{K: 64, Scheme: minhash.KHash}},
		{"cjk-bits8-seed", []string{"--shingle", "cjk", "--bits", "8", "--seed", "7", zst}, "", false,
			"cjk", minhash.Params{Bits: 8, Seed: 7}},
		{"stdin-stdout", []string{"--num-perm", "100", "--bits", "16", "-"}, jsonl.String(), true,
			"prose", minhash.Params{K: 100, Bits: 16}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "sigs.bin")
			dest := out
			if c.stdout {
				dest = "-"
			}
			args := append([]string{"sign", "-q", "--workers", "2", "-o", dest}, c.args...)
			code, stdout, stderr := runCLI(t, c.stdin, args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var data []byte
			if c.stdout {
				data = []byte(stdout)
			} else {
				var err error
				if data, err = os.ReadFile(out); err != nil {
					t.Fatal(err)
				}
			}
			spec, err := shingle.Parse(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			sh := shingle.MustNew(spec)
			h := minhash.MustNewHasher(c.params)
			r, err := sigfile.NewReader(bytes.NewReader(data), dest, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The header says how the signatures were made, seed included.
			if err := r.CheckMinHash(spec, h.Params()); err != nil {
				t.Fatal(err)
			}
			if got := r.Header().MinHash; got != h.Params() {
				t.Errorf("header params %v; want %v", got, h.Params())
			}
			var rec sigfile.Record
			for i := 0; ; i++ {
				err := r.Next(&rec)
				if errors.Is(err, io.EOF) {
					if i != len(docs) {
						t.Fatalf("%d signatures; want %d", i, len(docs))
					}
					break
				}
				if err != nil {
					t.Fatalf("signature %d: %v", i, err)
				}
				if string(rec.ID) != docs[i].id {
					t.Errorf("signature %d: id %q; want %q", i, rec.ID, docs[i].id)
				}
				if want := h.SignText(nil, sh, []byte(docs[i].text)); !slices.Equal(rec.Sig, want) {
					t.Errorf("signature %d (%q) differs from the library's", i, docs[i].id)
				}
			}
		})
	}
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// TestSignFailureLeavesNoFile: a sign run that fails leaves no output file,
// not even a partial one.
func TestSignFailureLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sigs.ndsf")
	code, _, _ := runCLI(t, "", "sign", "-q", "-o", out, filepath.Join(dir, "missing.jsonl"))
	if code == ExitOK {
		t.Fatal("sign of a missing input succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("files left behind: %v", ents)
	}
}
