package plan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/simhash"
)

// reportCorpus is a corpus of the weighting report.
type reportCorpus struct {
	name  string
	texts [][]byte
}

// loadJSONL reads the text field of every line of a JSON Lines file.
func loadJSONL(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var texts [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var rec struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		texts = append(texts, []byte(rec.Text))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return texts
}

// loadTrain reads a "<id> <text>" per line file (../shared/data/articles).
func loadTrain(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var texts [][]byte
	for line := range bytes.Lines(data) {
		_, text, _ := bytes.Cut(bytes.TrimRight(line, "\n"), []byte(" "))
		texts = append(texts, text)
	}
	return texts
}

// weightingRow is one weighting's figures on one corpus.
type weightingRow struct {
	name   string
	recall [][3]float64 // per k in reportKs: recall at J ≥ 0.8, 0.9, 0.95
	cand   []float64    // per k: candidate pairs (within k) per document
	mean   [3]float64   // mean distance of the true pairs in [0.8,0.9), [0.9,0.95), [0.95,1]
}

var (
	reportKs         = []int{3, 4, 5, 6, 7, 8}
	reportThresholds = [3]float64{0.8, 0.9, 0.95}
)

// TestSimHashWeighting measures TF against TF-IDF weighting (and MinHash
// beside them) on real and generated corpora: the recall, after exact
// verification, of the pairs at J ≥ 0.8, 0.9 and 0.95 (from the exact join)
// for k = 3..8, and the candidate pairs per document. It runs on the bundled
// articles, on ../shared/data/articles when present, and on the JSON Lines
// files listed in NEARDUP_SIMHASH_CORPUS (separated by ':'); run with -v
// to see the tables (BENCHMARKS.md, "SimHash: weighting and k").
//
// What it asserts: on each corpus's real fingerprints, the batch pipeline
// (simhash.Layout.Pairs) finds exactly the pairs within k that a comparison
// of all pairs counts, for k = 3 and 8.
func TestSimHashWeighting(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the weighting report")
	}
	corpora := []reportCorpus{{"articles_1000 (bundled)", loadJSONL(t, "../testdata/articles_1000.jsonl")}}
	if p := "../../shared/data/articles/articles_2500.train"; fileExists(p) {
		corpora = append(corpora, reportCorpus{"articles_2500 (shared/data)", loadTrain(t, p)})
	}
	if env := os.Getenv("NEARDUP_SIMHASH_CORPUS"); env != "" {
		for _, p := range strings.Split(env, ":") {
			corpora = append(corpora, reportCorpus{filepath.Base(p), loadJSONL(t, p)})
		}
	}
	for _, c := range corpora {
		t.Run(c.name, func(t *testing.T) { weightingReport(t, c) })
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func weightingReport(t *testing.T, c reportCorpus) {
	sh := shingle.MustNew(shingle.Prose)
	n := len(c.texts)
	feats := make([][]uint64, n)
	sets := make([][]uint64, n)
	df, err := simhash.NewDFTable(simhash.DFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bigDF, err := simhash.NewDFTable(simhash.DFOptions{Rows: 2, LogWidth: 26})
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range c.texts {
		feats[i] = sh.AppendFeatures(nil, text)
		sets[i] = eval.Normalize(slices.Clone(feats[i]))
		df.AddDocument(feats[i])
		bigDF.AddDocument(feats[i])
	}
	truth, err := eval.AllPairs(sets, reportThresholds[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s: %d documents, %d pairs at J ≥ 0.8 (", c.name, n, len(truth))
	for i, th := range reportThresholds {
		cnt := 0
		for _, p := range truth {
			if p.Jaccard >= th {
				cnt++
			}
		}
		if i > 0 {
			fmt.Fprint(&b, ", ")
		}
		fmt.Fprintf(&b, "%d at ≥ %v", cnt, th)
	}
	fmt.Fprintf(&b, ")\n")

	weightings := []struct {
		name string
		h    *simhash.Hasher
	}{
		{"tf", &simhash.Hasher{}},
		{"tfidf", simhash.NewHasher(df.IDF())},
		{"tfidf, exact df", simhash.NewHasher(bigDF.IDF())},
	}
	var rows []weightingRow
	var tfFps []uint64
	for wi, w := range weightings {
		fps := make([]uint64, n)
		for i, f := range feats {
			fps[i] = w.h.FingerprintFeatures(f)
		}
		if wi == 0 {
			tfFps = fps
		}
		hist := distanceHistogram(fps, 0)
		row := weightingRow{name: w.name}
		var sum, cnt [3]float64
		for _, p := range truth {
			d := float64(simhash.Distance(fps[p.A], fps[p.B]))
			i := 0
			switch {
			case p.Jaccard >= 0.95:
				i = 2
			case p.Jaccard >= 0.9:
				i = 1
			}
			sum[i] += d
			cnt[i]++
		}
		for i := range sum {
			row.mean[i] = sum[i] / cnt[i] // NaN without pairs
		}
		within := int64(0)
		for d := 0; d < reportKs[0]; d++ {
			within += hist[d]
		}
		for _, k := range reportKs {
			within += hist[k]
			var rec [3]float64
			for ti, th := range reportThresholds {
				hit, all := 0, 0
				for _, p := range truth {
					if p.Jaccard >= th {
						all++
						if simhash.Distance(fps[p.A], fps[p.B]) <= k {
							hit++
						}
					}
				}
				rec[ti] = float64(hit) / float64(max(all, 1))
			}
			row.recall = append(row.recall, rec)
			row.cand = append(row.cand, float64(within)/float64(n))
		}
		rows = append(rows, row)

		// The batch pipeline on these (skewed, real) fingerprints finds
		// exactly the pairs within k.
		for _, o := range []simhash.Options{{MaxDistance: 3}, {MaxDistance: 8, Blocks: 11}} {
			l, err := simhash.NewLayout(o)
			if err != nil {
				t.Fatal(err)
			}
			pairs, m, err := l.Pairs(nil, fps, l.MaxDistance(), &simhash.PairOptions{Cap: simhash.NoCap})
			if err != nil {
				t.Fatal(err)
			}
			want := int64(0)
			for d := 0; d <= l.MaxDistance(); d++ {
				want += hist[d]
			}
			if int64(len(pairs)) != want || m.Pairs != want {
				t.Errorf("%s k=%d: the batch pipeline finds %d pairs (%d emitted); all pairs compared: %d", w.name, l.MaxDistance(), len(pairs), m.Pairs, want)
			}
		}
	}

	fmt.Fprintf(&b, "recall at J ≥ 0.8 / 0.9 / 0.95, and candidate pairs (within k) per document:\n")
	fmt.Fprintf(&b, "%2s", "k")
	for _, r := range rows {
		fmt.Fprintf(&b, " | %-30s", r.name)
	}
	fmt.Fprintln(&b)
	for i, k := range reportKs {
		fmt.Fprintf(&b, "%2d", k)
		for _, r := range rows {
			fmt.Fprintf(&b, " | %.3f %.3f %.3f %12.4f", r.recall[i][0], r.recall[i][1], r.recall[i][2], r.cand[i])
		}
		fmt.Fprintln(&b)
	}
	fmt.Fprintf(&b, "mean distance of the pairs at J in [0.8, 0.9), [0.9, 0.95), [0.95, 1]:")
	for _, r := range rows {
		fmt.Fprintf(&b, " %s", r.name)
		for _, m := range r.mean {
			if math.IsNaN(m) {
				fmt.Fprint(&b, " —")
			} else {
				fmt.Fprintf(&b, " %.2f", m)
			}
		}
		fmt.Fprint(&b, ";")
	}
	fmt.Fprintf(&b, " the unit-weight model: %.2f %.2f %.2f at J = 0.85, 0.925, 0.975\n",
		64*SimHashBitFlip(0.85), 64*SimHashBitFlip(0.925), 64*SimHashBitFlip(0.975))

	// MinHash as dedup runs it by default at t = 0.8: 128 one-permutation
	// slots, the banding lsh.ForRecall picks for recall 0.99 at 0.8.
	bands, err := lsh.ForRecall(0.8, 128, 0.99)
	if err != nil {
		t.Fatal(err)
	}
	h := minhash.MustNewHasher(minhash.Params{K: 128})
	docBits := lsh.DocBits(n)
	var entries, slots []uint64
	var sig minhash.Signature
	for i, text := range c.texts {
		sig = h.SignText(sig[:0], sh, text)
		slots = h.Params().AppendSlots(slots[:0], sig)
		keys := bands.AppendKeys(nil, slots)
		entries = lsh.AppendEntries(entries, keys, uint32(i), docBits)
	}
	pairs, _, err := lsh.Candidates(nil, entries, docBits, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rec [3]float64
	for ti, th := range reportThresholds {
		hit, all := 0, 0
		for _, p := range truth {
			if p.Jaccard >= th {
				all++
				if _, ok := slices.BinarySearch(pairs, lsh.PackPair(uint32(p.A), uint32(p.B))); ok {
					hit++
				}
			}
		}
		rec[ti] = float64(hit) / float64(max(all, 1))
	}
	fmt.Fprintf(&b, "minhash k=128 oph, %d×%d bands: recall %.3f %.3f %.3f, %.4f candidate pairs per document\n",
		bands.Bands, bands.Rows, rec[0], rec[1], rec[2], float64(len(pairs))/float64(n))

	// The planner on a random quarter of the corpus (TF), for J ≥ 0.95 and
	// recall 0.95, against the recall the whole corpus gives at its k.
	if n >= 4000 {
		r := rand.New(rand.NewPCG(1, 2))
		idx := r.Perm(n)[:n/4]
		slices.Sort(idx)
		var ssets [][]uint64
		var sfps []uint64
		for _, i := range idx {
			ssets = append(ssets, sets[i])
			sfps = append(sfps, tfFps[i])
		}
		s, err := MeasureSimHash(ssets, sfps, 0, 0.5, 200000, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := MakeSimHash(SimHashInput{Documents: int64(n), Threshold: 0.95, Recall: 0.95, Sample: s})
		if p == nil {
			t.Fatal(err)
		}
		hit, all := 0, 0
		for _, q := range truth {
			if q.Jaccard >= 0.95 {
				all++
				if simhash.Distance(tfFps[q.A], tfFps[q.B]) <= p.K {
					hit++
				}
			}
		}
		fmt.Fprintf(&b, "\nplan (TF) from a random quarter, %v:\n%s\nthe whole corpus at k = %d: recall %.4f over %d pairs at J ≥ 0.95\n",
			err, p, p.K, float64(hit)/float64(all), all)
	}
	t.Log(b.String())
}
