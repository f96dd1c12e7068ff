package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/sitetemplate"
	"github.com/neardup/neardup/sigfile"
)

// siteCorpus writes n of the bundled articles, those of the 10 labelled
// pairs first, as JSON Lines, as they are and wrapped in the site template,
// and returns both paths.
func siteCorpus(t *testing.T, n int) (plain, site string) {
	t.Helper()
	labelled := map[string]bool{}
	td, err := os.ReadFile("../../testdata/articles_1000.truth")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range strings.Fields(string(td)) {
		labelled[id] = true
	}
	f, err := os.Open(sample)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	plain, site = filepath.Join(dir, "plain.jsonl"), filepath.Join(dir, "site.jsonl")
	var p, s strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for others := n - len(labelled); sc.Scan(); {
		var d struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		if !labelled[d.ID] {
			if others == 0 {
				continue
			}
			others--
		}
		line, _ := json.Marshal(d)
		p.Write(append(line, '\n'))
		d.Text = sitetemplate.Wrap(d.Text)
		line, _ = json.Marshal(d)
		s.Write(append(line, '\n'))
	}
	os.WriteFile(plain, []byte(p.String()), 0o644)
	os.WriteFile(site, []byte(s.String()), 0o644)
	return plain, site
}

// readSignatures returns the spec and the (id, signature) records of a
// signature file.
func readSignatures(t *testing.T, path string) (string, []string) {
	t.Helper()
	r, err := sigfile.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	var rec sigfile.Record
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(rec.Sig)
		out = append(out, string(rec.ID)+" "+string(b))
	}
	return r.Header().Spec, out
}

// TestBoilerplateCommands: neardup boilerplate writes the template's lines;
// sign, eval truth and index build drop them (counting them, or from that
// file), so the wrapped pages get the signatures and the truth of the bare
// articles, the spec names the set, and the index stores it.
func TestBoilerplateCommands(t *testing.T) {
	plain, site := siteCorpus(t, 200)
	dir := t.TempDir()
	lines := filepath.Join(dir, "lines.tsv")
	code, stdout, stderr := runCLI(t, "", "boilerplate", "-o", lines, site)
	if code != ExitOK || !strings.Contains(stdout, "lines in at least 128 documents") || !strings.Contains(stdout, "The Daily Ledger") {
		t.Fatalf("boilerplate: exit %d\n%s%s", code, stdout, stderr)
	}
	data, _ := os.ReadFile(lines)
	if n := strings.Count(string(data), "\n"); n != 1+33 {
		t.Errorf("lines file of %d lines; want a header and the template's 33", n)
	}

	// sign: the same signatures as the bare articles, under a spec with
	// the set, whether counted (from standard input) or read.
	plainSigs := filepath.Join(dir, "plain.ndsf")
	if code, _, stderr := runCLI(t, "", "sign", "-q", "-o", plainSigs, plain); code != ExitOK {
		t.Fatalf("sign: %s", stderr)
	}
	_, want := readSignatures(t, plainSigs)
	siteData, _ := os.ReadFile(site)
	for i, args := range [][]string{
		{"--boilerplate", "auto", "-"},
		{"--boilerplate-lines", lines, site},
	} {
		out := filepath.Join(dir, "site.ndsf")
		stdin := ""
		if i == 0 {
			stdin = string(siteData)
		}
		code, _, stderr := runCLI(t, stdin, append([]string{"sign", "-q", "-o", out}, args...)...)
		if code != ExitOK || !strings.Contains(stderr, "boilerplate: 33 lines dropped") {
			t.Fatalf("sign %q: exit %d: %s", args, code, stderr)
		}
		spec, got := readSignatures(t, out)
		if !strings.Contains(spec, "/boilerplate:1:33:") || !slices.Equal(got, want) {
			t.Errorf("sign %q: spec %s; signatures equal to the bare articles' %v", args, spec, slices.Equal(got, want))
		}
	}

	// eval truth: the pairs of the bare articles.
	truth := func(args ...string) string {
		out := filepath.Join(dir, "truth.tsv")
		code, _, stderr := runCLI(t, "", append([]string{"eval", "truth", "--threshold", "0.3", "-o", out}, args...)...)
		if code != ExitOK {
			t.Fatalf("eval truth %q: %s", args, stderr)
		}
		data, _ := os.ReadFile(out)
		_, body, _ := strings.Cut(string(data), "\n") // the header names the spec
		return body
	}
	if got, want := truth("--boilerplate", "auto", site), truth(plain); got != want || strings.Count(want, "\n") < 10 {
		t.Errorf("eval truth of the pages without boilerplate:\n%s\nof the bare articles:\n%s", got, want)
	}
	if got := truth(site); got == truth(plain) {
		t.Error("eval truth with the template kept is that of the bare articles")
	}

	// index build stores the set; reopened, the index drops the lines.
	idx := filepath.Join(dir, "idx")
	code, stdout, stderr = runCLI(t, "", "index", "build", "-q", "--data", idx, "--boilerplate-lines", lines, site)
	if code != ExitOK || !strings.Contains(stdout, "boilerplate: 33 lines dropped") {
		t.Fatalf("index build: exit %d\n%s%s", code, stdout, stderr)
	}
	db, err := index.Open(idx, &index.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if c := db.Config(); c.Spec.Boilerplate.Len() != 33 {
		t.Errorf("the index's spec %s holds %d lines; want 33", c.Spec, c.Spec.Boilerplate.Len())
	}

	// Refused up front: no inputs to count, a file counted under another
	// spec, both flags.
	for _, args := range [][]string{
		{"index", "build", "-q", "--data", filepath.Join(dir, "idx2"), "--boilerplate", "auto"},
		{"sign", "-q", "-o", filepath.Join(dir, "x"), "--boilerplate-lines", lines, "--shingle", "web", site},
		{"sign", "-q", "-o", filepath.Join(dir, "x"), "--boilerplate-lines", lines, "--boilerplate", "5", site},
	} {
		if code, _, stderr := runCLI(t, "", args...); code == ExitOK {
			t.Errorf("%q: exit 0; want refused (%s)", args, stderr)
		}
	}
}
