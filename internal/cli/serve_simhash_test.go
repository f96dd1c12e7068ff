package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/simhash"
)

// simTexts returns n documents in families: a text of 40–80 words drawn
// from a small vocabulary and copies of it with 0 to 6 words replaced, so
// that the fingerprints of a family lie at every distance around the
// index's k, and unrelated families about 32 bits apart.
func simTexts(n int, seed uint64) (ids, texts []string) {
	r := rand.New(rand.NewPCG(seed, seed))
	vocab := make([]string, 2000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%d", i)
	}
	for len(texts) < n {
		base := make([]string, 40+r.IntN(41))
		for i := range base {
			base[i] = vocab[r.IntN(len(vocab))]
		}
		texts = append(texts, strings.Join(base, " "))
		for range r.IntN(5) {
			w := slices.Clone(base)
			for range r.IntN(7) {
				w[r.IntN(len(w))] = vocab[r.IntN(len(vocab))]
			}
			texts = append(texts, strings.Join(w, " "))
		}
	}
	texts = texts[:n]
	for i := range texts {
		ids = append(ids, fmt.Sprintf("s%04d", i))
	}
	return ids, texts
}

// startServeClient runs neardup serve with args (startServe) until the test
// ends, which checks it exits 0, and returns its client once it is ready.
func startServeClient(t *testing.T, args ...string) *server.Client {
	t.Helper()
	s := startServe(t, args...)
	t.Cleanup(func() {
		if code := s.stop(); code != ExitOK {
			t.Errorf("serve: exit %d\n%s", code, s.logs)
		}
	})
	c := server.NewClient(s.url, "", nil)
	if err := c.Ready(context.Background()); err != nil {
		t.Fatalf("serve answers but is not ready: %v\n%s", err, s.logs)
	}
	return c
}

// TestServeSimHashBruteForce: index build --sketch simhash makes a SimHash
// index (TF, and TF-IDF with the corpus's document frequencies stored with
// it), serve reads the sketch from the index alone, and the check endpoint
// answers every document with exactly the other documents whose
// fingerprints are within the index's Hamming distance (a comparison of all
// pairs of the library's fingerprints), each with the model's similarity at
// its distance. Sketch flags that disagree with the index are refused.
func TestServeSimHashBruteForce(t *testing.T) {
	n := 600
	if testing.Short() {
		n = 200
	}
	ids, texts := simTexts(n, 7)
	var jsonl bytes.Buffer
	for i := range texts {
		jsonl.WriteString(`{"id":"` + ids[i] + `","text":` + quote(texts[i]) + "}\n")
	}
	in := filepath.Join(t.TempDir(), "docs.jsonl")
	if err := os.WriteFile(in, jsonl.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sh := shingle.MustNew(shingle.Prose)
	for _, c := range []struct {
		name   string
		flags  []string
		k      int
		blocks int
		tfidf  bool
	}{
		{"tf-default", nil, 3, 4, false},
		{"tfidf-k5-B7", []string{"--weight", "tfidf", "--hamming", "5", "--blocks", "7"}, 5, 7, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			args := append(append([]string{"index", "build", "-q", "--sketch", "simhash", "--data", dir}, c.flags...), in)
			code, stdout, stderr := runCLI(t, "", args...)
			if code != ExitOK || !strings.Contains(stdout, fmt.Sprintf("indexed %d documents", n)) {
				t.Fatalf("index build: exit %d\n%s%s", code, stdout, stderr)
			}
			code, stdout, _ = runCLI(t, "", "index", "stats", "--data", dir)
			var st map[string]any
			if code != ExitOK || json.Unmarshal([]byte(stdout), &st) != nil || st["sketch"] != "simhash" ||
				st["hamming"] != float64(c.k) || st["blocks"] != float64(c.blocks) {
				t.Fatalf("index stats: exit %d\n%s", code, stdout)
			}
			// The index's sketch is fixed: other flags are refused.
			for _, bad := range [][]string{{"--sketch", "simhash", "--hamming", fmt.Sprint(c.k + 1)}, {"--sketch", "simhash", "--blocks", fmt.Sprint(c.blocks + 1)}} {
				if code, _, stderr := runCLI(t, "", append([]string{"index", "stats", "--data", dir}, bad...)...); code != ExitFailure {
					t.Errorf("index stats %v: exit %d %s; want 1", bad, code, stderr)
				}
			}

			var idf *simhash.IDF
			if c.tfidf {
				table, err := simhash.NewDFTable(simhash.DFOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range texts {
					table.AddText(sh, []byte(s))
				}
				idf = table.IDF()
			}
			h := simhash.NewHasher(idf)
			fps := make([]uint64, n)
			for i, s := range texts {
				fps[i] = h.FingerprintText(sh, []byte(s))
			}

			client := startServeClient(t, "--data", dir)
			ctx := context.Background()
			near := 0 // documents with a match
			for i := range texts {
				got, err := client.Check(ctx, server.Document{ID: ids[i], Text: texts[i]}, server.Query{Threshold: 0.01, Limit: 1000})
				if err != nil {
					t.Fatal(err)
				}
				var want []server.Duplicate
				for j, fp := range fps {
					if d := simhash.Distance(fps[i], fp); j != i && d <= c.k {
						want = append(want, server.Duplicate{ID: ids[j], Similarity: simhash.ModelJaccard(d)})
					}
				}
				slices.SortFunc(got.Duplicates, func(a, b server.Duplicate) int { return strings.Compare(a.ID, b.ID) })
				if !slices.EqualFunc(got.Duplicates, want, func(a, b server.Duplicate) bool { return a.ID == b.ID && a.Similarity == b.Similarity }) {
					t.Fatalf("check %s: %v; brute force %v", ids[i], got.Duplicates, want)
				}
				if len(want) > 0 {
					near++
					if got.Status != server.StatusDuplicate {
						t.Errorf("check %s: status %q with matches", ids[i], got.Status)
					}
				}
			}
			// The corpus must test something: pairs within k, and pairs
			// of a family beyond it.
			beyond := 0
			for i := 1; i < n; i++ {
				if d := simhash.Distance(fps[i-1], fps[i]); d > c.k && d < 16 {
					beyond++
				}
			}
			if near < n/10 || beyond < n/50 {
				t.Fatalf("%d documents with a match within %d bits, %d neighbours beyond it: the corpus does not test the index", near, c.k, beyond)
			}
			t.Logf("%d of %d documents have matches within %d bits; %d neighbours in 16 bits beyond it", near, n, c.k, beyond)
		})
	}
}
