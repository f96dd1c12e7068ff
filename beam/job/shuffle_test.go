package job_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/beam/job"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
)

// hotCorpus writes a corpus with one hot group: hot edited copies of one
// 300-word text (1 to 4 words replaced each, so that they share most of
// their buckets but not all of them), and 100 unrelated documents.
func hotCorpus(t *testing.T, hot int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(12, 5))
	word := func() string { return fmt.Sprintf("w%d", rng.IntN(50_000)) }
	base := make([]string, 300)
	for i := range base {
		base[i] = word()
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for i := range hot + 100 {
		text := slices.Clone(base)
		if i >= hot {
			for j := range text {
				text[j] = word()
			}
		} else {
			for range 1 + rng.IntN(4) {
				text[rng.IntN(len(text))] = word()
			}
		}
		if err := enc.Encode(map[string]string{"id": fmt.Sprint("doc-", i), "text": strings.Join(text, " ")}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "hot.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// shuffleLine is the driver's log line on the verification shuffle.
var shuffleLine = regexp.MustCompile(`verification shuffle: (\d+) document infos of (\d+) documents \(at most (\d+) of one\), (\d+) bytes`)

// TestVerificationShuffleBounded: each document's info travels to
// verification at most once per bucket key it has (bands × C(rows, probe),
// or SimHash's tables) however many candidate pairs it is in, here with a
// group of 150 near copies that share buckets of about 100 documents, with
// and without a bucket cap. Before, an info travelled once per candidate
// pair its document headed: the first member of such a bucket's about 100
// times (all pairs of the bucket, or its star when capped). The outputs
// stay neardup dedup's.
func TestVerificationShuffleBounded(t *testing.T) {
	const hot = 150
	path := hotCorpus(t, hot)
	for _, v := range []struct {
		name string
		opts dedup.Options
	}{
		{"exact", dedup.Options{}},
		{"exact-cap10", dedup.Options{BucketCap: 10}},
		{"estimate-probe", dedup.Options{Verify: dedup.VerifyEstimate, Bands: lsh.Params{Bands: 8, Rows: 4, Probe: 1}}},
		{"simhash", dedup.Options{Sketch: sketch.SimHash, Threshold: 0.7}},
	} {
		t.Run(v.name, func(t *testing.T) {
			if testing.Short() && v.name != "exact" {
				t.Skip("short")
			}
			var log bytes.Buffer
			want, got, wr, gr := run(t, []string{path}, &v.opts, job.Options{SingleFile: true, Partitions: 4, Log: &log})
			compare(t, want, got, wr, gr)
			m := shuffleLine.FindStringSubmatch(log.String())
			if m == nil {
				t.Fatalf("no shuffle line in the log:\n%s", log.String())
			}
			sends, docs, most := atoi(t, m[1]), atoi(t, m[2]), atoi(t, m[3])
			cfg := wr.Config
			keys := cfg.Bands * binomial(cfg.Rows, cfg.Probe)
			if cfg.SimHash != nil {
				keys = cfg.SimHash.Tables
			}
			// The group is hot: with MinHash the first member of its largest
			// bucket heads a pair with every other member (all pairs, or the
			// capped bucket's star), far more than keys; SimHash pairs only
			// those within the Hamming distance, so there the documents
			// head more than keys pairs on average (and one at least that).
			if top := wr.Buckets.Top; cfg.SimHash == nil && (len(top) == 0 || top[0].Size < hot/2) {
				t.Fatalf("largest buckets %+v: want one of at least %d documents", top, hot/2)
			}
			if cfg.SimHash != nil && wr.Counts.Candidates <= int64(keys*docs) {
				t.Fatalf("%d candidate pairs: the group of %d is not hot", wr.Counts.Candidates, hot)
			}
			if n := int(wr.Counts.VerifiedDocs); docs < hot*9/10 || n != 0 && docs != n {
				t.Errorf("%d documents sent to verification; want those in candidate pairs (%d; at least %d)", docs, n, hot*9/10)
			}
			if most > keys || most < 1 {
				t.Errorf("a document's info sent %d times; want 1 to %d (its bucket keys)", most, keys)
			}
			if sends > docs*keys {
				t.Errorf("%d infos sent for %d documents; want at most %d a document", sends, docs, keys)
			}
			t.Logf("%d keys a document: %d infos for %d documents, at most %d of one, %s bytes", keys, sends, docs, most, m[4])
		})
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// binomial returns C(n, k).
func binomial(n, k int) int {
	c := 1
	for i := range k {
		c = c * (n - i) / (i + 1)
	}
	return c
}

// candLine is the driver's log line on the candidate shuffle.
var candLine = regexp.MustCompile(`candidate shuffle: (\d+) pairs emitted by the buckets, (\d+) sent to their lower documents in (\d+) records`)

// copiesLine is the end of the verification shuffle's line: its copies.
var copiesLine = regexp.MustCompile(`(\d+) of them copies of a text the task had`)

// TestCopiesAndCandidatesBatched: copies of one text share every bucket,
// so each pair is emitted by all the bands, and all their pairs fall in one
// verification task. The candidates leave each partition once per pair, in
// one record per lower document (before, one record per pair emitted: 16
// times the pairs here), and the task receives the text and signature once,
// the other copies' infos as copies (before, every info carried them). The
// outputs stay neardup dedup's.
func TestCopiesAndCandidatesBatched(t *testing.T) {
	const copies, parts = 30, 4
	rng := rand.New(rand.NewPCG(3, 9))
	text := func() string {
		w := make([]string, 300)
		for i := range w {
			w[i] = fmt.Sprintf("w%d", rng.IntN(50_000))
		}
		return strings.Join(w, " ")
	}
	same := text()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for i := range copies + 100 {
		s := same
		if i%2 == 1 || i >= 2*copies {
			s = text()
		}
		if err := enc.Encode(map[string]string{"id": fmt.Sprint("doc-", i), "text": s}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "copies.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	want, got, wr, gr := run(t, []string{path}, &dedup.Options{}, job.Options{SingleFile: true, Partitions: parts, Log: &log})
	compare(t, want, got, wr, gr)
	m, c := shuffleLine.FindStringSubmatch(log.String()), copiesLine.FindStringSubmatch(log.String())
	cl := candLine.FindStringSubmatch(log.String())
	if m == nil || c == nil || cl == nil {
		t.Fatalf("no shuffle lines in the log:\n%s", log.String())
	}
	sends, docs, cps := atoi(t, m[1]), atoi(t, m[2]), atoi(t, c[1])
	if docs != copies || sends != copies || cps != copies-1 {
		t.Errorf("%d infos of %d documents, %d of them copies; want %d infos, all copies but one", sends, docs, cps, copies)
	}
	emitted, sent, records := atoi(t, cl[1]), atoi(t, cl[2]), atoi(t, cl[3])
	pairs := copies * (copies - 1) / 2
	if cand := int(wr.Counts.Candidates); cand != pairs || emitted != wr.Config.Bands*pairs {
		t.Fatalf("%d candidates, %d pairs emitted; want %d and %d", cand, emitted, pairs, wr.Config.Bands*pairs)
	}
	if sent < pairs || sent > parts*pairs || records > parts*(copies-1) {
		t.Errorf("%d candidates sent in %d records; want %d to %d in at most %d", sent, records, pairs, parts*pairs, parts*(copies-1))
	}
}
