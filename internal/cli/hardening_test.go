package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
)

// writeJSONL writes n documents with ids "t1"…"tn" and distinct texts (each
// near-duplicate of the next, so that eval truth finds pairs), letting edit
// change line i (1-based; "" keeps the default), and returns the path.
func writeJSONL(t *testing.T, dir string, n int, edit func(line int) string) string {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if edit != nil {
			if s := edit(i); s != "" {
				b.WriteString(s + "\n")
				continue
			}
		}
		fmt.Fprintf(&b, `{"id":"t%d","text":"the quick brown fox %d jumps over the lazy dog %d near the river bank"}`+"\n", i, i/2, i/2)
	}
	p := filepath.Join(dir, "docs.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readSigIDs returns the ids of a signature file made with the defaults.
func readSigIDs(t *testing.T, data []byte) []string {
	t.Helper()
	r, err := sigfile.NewReader(bytes.NewReader(data), "signatures", nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := shingle.Parse("prose")
	if err := r.CheckMinHash(spec, minhash.MustNewHasher(minhash.Params{}).Params()); err != nil {
		t.Fatal(err)
	}
	var ids []string
	var rec sigfile.Record
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			return ids
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, string(rec.ID))
	}
}

// onlyFiles fails unless dir holds exactly the named files (no temporary
// or partial outputs).
func onlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("directory holds %q; want %q", got, names)
	}
}

// TestRepeatedIDs: sign and eval truth refuse a repeated id, naming the file
// and line of its second occurrence (exit 1, no output), and under
// --skip-bad leave the later record out, count it as bad and list it in
// --bad-out.
func TestRepeatedIDs(t *testing.T) {
	dir := t.TempDir()
	in := writeJSONL(t, dir, 200, func(l int) string {
		switch l {
		case 150: // repeats line 120's id and text: a pair "t120 t120" before
			return `{"id":"t120","text":"the quick brown fox 60 jumps over the lazy dog 60 near the river bank"}`
		case 170:
			return `{"id":"t7","text":"another text"}`
		case 180:
			return `{"id":"t120","text":"a third t120"}`
		}
		return ""
	})
	for _, cmd := range [][]string{{"sign", "-q"}, {"eval", "truth", "--threshold", "0.3"}} {
		name := cmd[0]
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := runCLI(t, "", append(cmd, "--workers", "2", "-o", out, in)...)
			if code != ExitFailure || !strings.Contains(stderr, in+`:150: dupid: duplicate id "t120", first at `+in+":120") {
				t.Errorf("exit %d, stderr %q; want exit 1 naming line 150 and line 120", code, stderr)
			}
			onlyFiles(t, filepath.Dir(out))

			badOut := filepath.Join(filepath.Dir(out), "bad.tsv")
			code, stdout, stderr := runCLI(t, "", append(cmd, "--workers", "2", "--skip-bad", "--bad-out", badOut, "-o", out, in)...)
			if code != ExitOK {
				t.Fatalf("--skip-bad: exit %d: %s", code, stderr)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			if name == "sign" {
				ids = readSigIDs(t, data)
				if len(ids) != 197 || ids[149] != "t151" || !strings.Contains(stderr, "signed 197 documents (3 bad skipped)") {
					t.Errorf("%d signatures, [149] = %q, stderr %q; want 197 without lines 150, 170, 180 and 3 bad", len(ids), ids[149], stderr)
				}
			} else {
				pf, err := eval.ReadPairFile(bytes.NewReader(data), out)
				if err != nil {
					t.Fatal(err)
				}
				if pf.Documents != 197 || !strings.Contains(stdout, "documents 197 ") {
					t.Errorf("documents %d, summary %q; want 197", pf.Documents, stdout)
				}
				if !strings.HasPrefix(string(data), "# neardup eval truth") || bytes.Contains(data, []byte("t120\tt120")) {
					t.Errorf("truth lists t120 with itself:\n%.300s", data)
				}
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
			onlyFiles(t, filepath.Dir(out), "bad.tsv", "out")

			if name == "sign" {
				// To standard output, staged until the ids are known.
				code, stdout, stderr := runCLI(t, "", "sign", "-q", "--skip-bad", "-o", "-", in)
				if code != ExitOK {
					t.Fatalf("-o -: exit %d: %s", code, stderr)
				}
				if got := readSigIDs(t, []byte(stdout)); len(got) != 197 || strings.Join(got, " ") != strings.Join(ids, " ") {
					t.Errorf("-o -: %d signatures; want the file's 197", len(got))
				}
			}
		})
	}
}

// TestFailedRunLeavesNoOutput: sign -o F of a file whose record 3,001 is bad
// fails and leaves no F (before, a 1 MB F that read as a valid signature
// file) and no temporary file; so does eval truth.
func TestFailedRunLeavesNoOutput(t *testing.T) {
	dir := t.TempDir()
	in := writeJSONL(t, dir, 6000, func(l int) string {
		if l == 3001 {
			return `{"id":"bad","text":`
		}
		return ""
	})
	for _, cmd := range [][]string{{"sign", "-q"}, {"eval", "truth"}} {
		t.Run(cmd[0], func(t *testing.T) {
			outDir := t.TempDir()
			code, _, stderr := runCLI(t, "", append(cmd, "--workers", "2", "-o", filepath.Join(outDir, "out"), in)...)
			if code != ExitFailure || !strings.Contains(stderr, in+":3001: corpus: not valid JSON") {
				t.Errorf("exit %d, stderr %q; want exit 1 naming line 3001", code, stderr)
			}
			onlyFiles(t, outDir)
		})
	}
}

// TestBadOut: --bad-out lists the records --skip-bad skipped (too large,
// not parsing), in input order, in a file written only on success; without
// --skip-bad it is a usage error.
func TestBadOut(t *testing.T) {
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
	for _, cmd := range [][]string{{"sign", "-q"}, {"eval", "truth"}} {
		t.Run(cmd[0], func(t *testing.T) {
			outDir := t.TempDir()
			args := append(cmd, "--workers", "2", "--max-record-bytes", "300", "-o", filepath.Join(outDir, "out"))
			code, _, stderr := runCLI(t, "", append(args, "--bad-out", filepath.Join(outDir, "bad.tsv"), in)...)
			if code != ExitUsage || !strings.Contains(stderr, "--skip-bad") {
				t.Errorf("--bad-out without --skip-bad: exit %d, %q; want 2 saying to give --skip-bad", code, stderr)
			}
			code, _, stderr = runCLI(t, "", append(args, "--skip-bad", "--bad-out", filepath.Join(outDir, "bad.tsv"), in)...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got, err := os.ReadFile(filepath.Join(outDir, "bad.tsv"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("--bad-out:\n%s\nwant\n%s", got, want)
			}
			onlyFiles(t, outDir, "bad.tsv", "out")
		})
	}
}

// TestUnknownCommandAndVersion: an unknown command or subcommand is a usage
// error (exit 2, as EXIT STATUS says), and version and --version print the
// release, Go and format versions.
func TestUnknownCommandAndVersion(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string // in stderr for errors, stdout otherwise
	}{
		{[]string{"nosuch"}, ExitUsage, `unknown command "nosuch" for "neardup"`},
		{[]string{"sig"}, ExitUsage, `did you mean "sign"?`},
		{[]string{"eval", "nosuch"}, ExitUsage, `unknown command "nosuch" for "neardup eval"`},
		{[]string{"index", "nosuch"}, ExitUsage, `unknown command "nosuch" for "neardup index"`},
		{[]string{"version", "extra"}, ExitUsage, `unknown command "extra"`},
		{[]string{"eval"}, ExitOK, "eval truth"},
		{[]string{"version"}, ExitOK, versionText()},
		{[]string{"--version"}, ExitOK, versionText()},
	} {
		code, stdout, stderr := runCLI(t, "", c.args...)
		got := stdout
		if c.code != ExitOK {
			got = stderr
		}
		if code != c.code || !strings.Contains(got, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, stdout, stderr, c.code, c.want)
		}
	}
	v := versionText()
	for _, want := range []string{"neardup 0.", "\ngo go1.", "\nshingle spec v1 (Unicode ", "\nsignature format v2\n", "\nindex format v"} {
		if !strings.Contains(v, want) {
			t.Errorf("version text %q lacks %q", v, want)
		}
	}
}

// TestMaxRecordBytesNamesTheFlag: a record over the limit is reported with
// the flag that sets it.
func TestMaxRecordBytesNamesTheFlag(t *testing.T) {
	in := writeJSONL(t, t.TempDir(), 10, nil)
	code, _, stderr := runCLI(t, "", "sign", "-q", "--max-record-bytes", "50", "-o", filepath.Join(t.TempDir(), "out"), in)
	if code != ExitFailure || !strings.Contains(stderr, in+":1: corpus: record too large") || !strings.Contains(stderr, "--max-record-bytes") {
		t.Errorf("exit %d, stderr %q; want exit 1 naming line 1 and --max-record-bytes", code, stderr)
	}
}
