package cli

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/sigfile"
)

// testKey is the key of the keyed-hashing tests, in every form it could leak
// in.
var testKey = [16]byte{0xc4, 0x1d, 0x5a, 0x07, 0x9b, 0xe2, 0x33, 0x6f, 0x80, 0x14, 0xaa, 0x5c, 0x2d, 0x71, 0xf9, 0x0e}

func keyForms() [][]byte {
	h := hex.EncodeToString(testKey[:])
	j, _ := json.Marshal(testKey)
	return [][]byte{testKey[:], []byte(h), []byte(strings.ToUpper(h)), j}
}

// writeKeyFile writes testKey as hex digits and a newline, mode 0600.
func writeKeyFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte(hex.EncodeToString(testKey[:])+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// noKey fails the test if data holds the key in any form.
func noKey(t *testing.T, what string, data []byte) {
	t.Helper()
	for _, f := range keyForms() {
		if bytes.Contains(data, f) {
			t.Errorf("%s holds the key (as %q)", what, f)
		}
	}
}

// noKeyInDir greps every file under dir for the key.
func noKeyInDir(t *testing.T, dir string) (files int) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		noKey(t, path, data)
		files++
		return nil
	})
	return files
}

// TestKeyFile: --key-file on every command that signs. dedup finds the
// bundled articles' 10 pairs under the key; sign's signatures differ from
// unkeyed ones in every record; the key's id, never the key, is in specs;
// an index built under the key opens only with it; and no byte of any
// output, log, answer or /metrics holds the key.
func TestKeyFile(t *testing.T) {
	key := writeKeyFile(t)
	out := t.TempDir()
	var logs []byte
	runOK := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runCLI(t, "", args...)
		logs = append(append(logs, stdout...), stderr...)
		if code != ExitOK {
			t.Fatalf("%s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		}
		return stdout
	}

	// dedup: the sample's 10 true pairs, estimated under the key.
	stdout := runOK("dedup", "-q", "--key-file", key, "-o", filepath.Join(out, "dedup"), sample)
	if !strings.Contains(stdout, "verified pairs 10") {
		t.Errorf("dedup --key-file: %q; want 10 verified pairs", stdout)
	}
	f, err := os.Open("../../testdata/articles_1000.truth")
	if err != nil {
		t.Fatal(err)
	}
	truth, err := eval.ReadPairFile(f, "articles_1000.truth")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := os.Open(filepath.Join(out, "dedup", "pairs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := eval.ReadPairFile(pf, "pairs.tsv")
	pf.Close()
	if err != nil {
		t.Fatal(err)
	}
	sameIDs := func(a, b []eval.LabeledPair) bool {
		return slices.EqualFunc(a, b, func(x, y eval.LabeledPair) bool { return x.A == y.A && x.B == y.B })
	}
	if !sameIDs(pairs.Pairs, truth.Pairs) {
		t.Errorf("dedup --key-file pairs %v; want the truth's %v", pairs.Pairs, truth.Pairs)
	}
	var rep struct{ Config struct{ Spec string } }
	data, _ := os.ReadFile(filepath.Join(out, "dedup", "report.json"))
	json.Unmarshal(data, &rep)
	if !strings.Contains(rep.Config.Spec, "/siphash:") {
		t.Errorf("report.json spec %q; want a keyed spec with the key's id", rep.Config.Spec)
	}

	// sign: every signature differs from the unkeyed one.
	keyed, plain := filepath.Join(out, "keyed.ndsf"), filepath.Join(out, "plain.ndsf")
	runOK("sign", "-q", "--key-file", key, "-o", keyed, sample)
	runOK("sign", "-q", "-o", plain, sample)
	ka, pa := readSigs(t, keyed), readSigs(t, plain)
	if len(ka) != 1000 || len(pa) != 1000 {
		t.Fatalf("signed %d and %d documents; want 1000", len(ka), len(pa))
	}
	for i := range ka {
		if slices.Equal(ka[i], pa[i]) {
			t.Errorf("document %d: keyed signature equals the unkeyed one", i)
		}
	}

	// eval truth: the same pairs, under the keyed spec.
	runOK("eval", "truth", "--threshold", "0.8", "--key-file", key, "-o", filepath.Join(out, "truth.tsv"), sample)
	tf, _ := os.ReadFile(filepath.Join(out, "truth.tsv"))
	if !bytes.Contains(tf, []byte("/siphash:")) || bytes.Count(tf, []byte("\n")) != 11 {
		t.Errorf("eval truth --key-file:\n%s\nwant a keyed spec in the header and 10 pairs", tf)
	}

	// index build and serve under the key; the index refuses to open without it.
	dir := filepath.Join(out, "idx")
	runOK("index", "build", "-q", "--key-file", key, "--data", dir, sample)
	code, _, stderr := runCLI(t, "", "index", "stats", "--data", dir)
	if code != ExitFailure || !strings.Contains(stderr, "--key-file") {
		t.Errorf("index stats of a keyed index without its key: exit %d, %q; want 1 and a hint to pass --key-file", code, stderr)
	}
	other := filepath.Join(t.TempDir(), "other")
	os.WriteFile(other, []byte("0123456789abcdef0123456789abcdef"), 0o600)
	if code, _, stderr = runCLI(t, "", "index", "stats", "--data", dir, "--key-file", other); code != ExitFailure || !strings.Contains(stderr, "another shingle spec") {
		t.Errorf("index stats with another key: exit %d, %q; want 1", code, stderr)
	}
	stdout = runOK("index", "stats", "--data", dir, "--key-file", key)
	if !strings.Contains(stdout, "siphash:") {
		t.Errorf("index stats: %s; want the keyed spec", stdout)
	}
	s := startServe(t, "--data", dir, "--key-file", key)
	var first struct{ ID, Text string }
	json.Unmarshal(readFirstLine(t, sample), &first)
	body, _ := json.Marshal(map[string]string{"text": first.Text})
	status, answer := s.post("/v1/check", string(body))
	if status != 200 || !strings.Contains(answer, `"id":"`+first.ID+`"`) {
		t.Errorf("check of a stored article under the key: %d %s", status, answer)
	}
	body, _ = json.Marshal(map[string]string{"id": "new-1", "text": "a new document under the keyed spec, about ships and harbours and the sea"})
	if status, answer = s.post("/v1/documents", string(body)); status != 201 {
		t.Errorf("insert: %d %s", status, answer)
	}
	metrics := s.get("/metrics")
	noKey(t, "/metrics", []byte(metrics))
	noKey(t, "answers", []byte(answer))
	if code := s.stop(); code != ExitOK {
		t.Errorf("serve: exit %d", code)
	}
	noKey(t, "serve's log", []byte(s.logs.String()))
	if !strings.Contains(s.logs.String(), "siphash:") {
		t.Errorf("serve's log does not show the keyed spec:\n%s", s.logs)
	}

	noKey(t, "standard output and error", logs)
	if n := noKeyInDir(t, out); n < 10 {
		t.Errorf("searched %d output files; want every output", n)
	}
}

// readSigs returns the signatures of a signature file, in order.
func readSigs(t *testing.T, path string) [][]uint64 {
	t.Helper()
	r, err := sigfile.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out [][]uint64
	var rec sigfile.Record
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, slices.Clone(rec.Sig))
	}
}
