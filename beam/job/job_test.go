package job_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/neardup/neardup/beam/internal/tmpdir"
	"github.com/neardup/neardup/beam/job"
	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
)

var fixtures string // a temporary directory shared by the tests

func TestMain(m *testing.M) {
	beamlog.LogLevel = "warn" // beam.Init sets up slog
	beam.Init()
	cleanup, err := tmpdir.Private("neardup-beam-test-") // Beam's leftovers go with it
	if err != nil {
		panic(err)
	}
	fixtures = os.TempDir()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

func runPrism(ctx context.Context, p *beam.Pipeline) error {
	_, err := prism.Execute(ctx, p)
	return err
}

const (
	repoRoot = "../.."
	sample   = repoRoot + "/testdata/articles_1000.jsonl"
)

// gencorpus writes a corpus made by the repository's generator
// (internal/tools/gencorpus, deterministic by seed) and returns its path.
func gencorpus(t *testing.T, name string, args ...string) string {
	t.Helper()
	out := filepath.Join(fixtures, name)
	if _, err := os.Stat(out); err == nil {
		return out
	}
	cmd := exec.Command("go", append([]string{"run", "./internal/tools/gencorpus", "-o", out}, args...)...)
	cmd.Dir = repoRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gencorpus: %v\n%s", err, b)
	}
	return out
}

// run runs neardup dedup and the Beam job with the same options and returns
// their output directories and reports.
func run(t *testing.T, inputs []string, opts *dedup.Options, o job.Options) (want, got string, wantRep, gotRep *dedup.Report) {
	t.Helper()
	ctx := context.Background()
	want, got = t.TempDir(), t.TempDir()
	d := *opts
	// The Beam job has no exact-duplicate pass: it signs every document, so
	// its report is that of neardup dedup without the pass (the outputs
	// are the same with it: TestExactPassOutputs).
	d.SkipExactPass = true
	var err error
	t0 := time.Now()
	if wantRep, err = dedup.Run(ctx, inputs, want, &d); err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	b := *opts
	o.Dedup = &b
	o.Run = runPrism
	if gotRep, err = job.Run(ctx, inputs, got, &o); err != nil {
		t.Fatal(err)
	}
	c := wantRep.Counts
	t.Logf("%d documents, %d candidates, %d pairs, %d clusters, %d removed; neardup dedup %.2fs, neardup-beam %.2fs",
		c.Documents, c.Candidates, c.VerifiedPairs, c.Clusters, c.Removed, t1.Sub(t0).Seconds(), time.Since(t1).Seconds())
	return want, got, wantRep, gotRep
}

var outputs = []string{dedup.PairsFile, dedup.ClustersFile, dedup.KeptFile}

// read returns the named output of dir: the file, or the concatenation of its
// shards in order.
func read(t *testing.T, dir, name string) []byte {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
		return b
	}
	stem, ext, _ := strings.Cut(name, ".") // kept.warc.gz: kept-00000-of-00002.warc.gz
	shards, err := filepath.Glob(filepath.Join(dir, stem+"-*-of-*."+ext))
	if err != nil || len(shards) == 0 {
		t.Fatalf("%s: no file and no shards in %s", name, dir)
	}
	slices.Sort(shards)
	var all []byte
	for _, s := range shards {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

// compare checks that got holds the same pairs, clusters and kept records
// (kept.jsonl, kept.warc.gz or kept.warc.wet.gz) as want, byte for byte, and that the reports agree on everything
// deterministic.
func compare(t *testing.T, want, got string, wr, gr *dedup.Report) {
	t.Helper()
	names := slices.Clone(outputs)
	if kept, _ := filepath.Glob(filepath.Join(want, "kept.warc*.gz")); len(kept) == 1 {
		names[2] = filepath.Base(kept[0]) // WARC or WET input
	}
	for _, name := range names {
		w, g := read(t, want, name), read(t, got, name)
		if !bytes.Equal(w, g) {
			t.Errorf("%s differs from neardup dedup's (%d bytes; want %d):\n%s", name, len(g), len(w), firstDiff(w, g))
		}
	}
	norm := func(r *dedup.Report) string {
		c := *r
		c.Tool, c.Timings, c.PeakRSSBytes, c.WallSeconds, c.Spill = "", nil, 0, 0, dedup.SpillReport{}
		b, _ := json.MarshalIndent(c, "", " ")
		return string(b)
	}
	if w, g := norm(wr), norm(gr); w != g {
		t.Errorf("report differs:\n%s", firstDiff([]byte(w), []byte(g)))
	}
	var onDisk dedup.Report
	b, err := os.ReadFile(filepath.Join(got, dedup.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &onDisk); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	if onDisk.Tool != job.Tool || norm(&onDisk) != norm(gr) {
		t.Errorf("report.json is not the report returned")
	}
}

func firstDiff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := range max(len(wl), len(gl)) {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return fmt.Sprintf("line %d:\n got %.300q\nwant %.300q", i+1, g, w)
		}
	}
	return "(same lines)"
}

// TestSample: the bundled sample with neardup dedup's defaults, as single
// files and as shards.
func TestSample(t *testing.T) {
	for _, single := range []bool{true, false} {
		t.Run(fmt.Sprintf("single=%v", single), func(t *testing.T) {
			want, got, wr, gr := run(t, []string{sample}, &dedup.Options{}, job.Options{SingleFile: single, ShardLines: 3, Partitions: 8})
			compare(t, want, got, wr, gr)
			if !single {
				if _, err := os.Stat(filepath.Join(got, "pairs-00003-of-00004.tsv")); err != nil {
					t.Errorf("want 4 pairs shards of about 3 lines for 10 pairs: %v", err)
				}
			}
		})
	}
}

// TestCorpus10k: a realistic generated corpus of 10,000 documents.
func TestCorpus10k(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 documents: about 2 s, 200 MiB")
	}
	path := gencorpus(t, "corpus10k.jsonl", "-docs", "10000", "-seed", "1")
	want, got, wr, gr := run(t, []string{path}, &dedup.Options{}, job.Options{SingleFile: true, Partitions: 16})
	compare(t, want, got, wr, gr)
}

// TestCorpus10kSimHash: the same corpus with SimHash, the blocks chosen
// from the document count inside the pipeline.
func TestCorpus10kSimHash(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 documents: about 2 s")
	}
	path := gencorpus(t, "corpus10k.jsonl", "-docs", "10000", "-seed", "1")
	want, got, wr, gr := run(t, []string{path}, &dedup.Options{Sketch: sketch.SimHash}, job.Options{SingleFile: true, Partitions: 16})
	compare(t, want, got, wr, gr)
	if wr.Config.SimHash == nil || wr.Config.SimHash.Blocks == 0 || wr.Counts.VerifiedPairs == 0 {
		t.Errorf("report %+v: want blocks chosen and pairs found", wr.Config.SimHash)
	}
}

// TestGoSource10k: real text, the Go distribution's own sources — every .go
// file under GOROOT/src and GOROOT/test (about 11,000 files, 110 MB: code,
// generated tables, test programs, many near copies among the compiler's
// fixedbugs tests) — in four input files, with the code shingle spec and
// sharded outputs. It skips when the sources are not installed, except under
// CI (set), where it must run. Short files share little but the licence
// header (buckets of up to 500 files), so there are about 21 candidates a
// document, and each candidate pair carries a document's signature and text
// to verification: Prism, which holds every collection in memory, peaks at
// about 3.5 GiB.
func TestGoSource10k(t *testing.T) {
	if testing.Short() {
		t.Skip("11,000 Go source files: about 20 s, 3.5 GiB")
	}
	inputs := goSource(t, "gosource", 3000)
	want, got, wr, gr := run(t, inputs, &dedup.Options{Spec: mustSpec(t, "code")},
		job.Options{ShardLines: 2000, Partitions: 8})
	compare(t, want, got, wr, gr)
	if c := wr.Counts; c.Documents < 10_000 || c.Clusters < 100 {
		t.Errorf("got %d documents and %d clusters; want at least 10,000 and 100", c.Documents, c.Clusters)
	}
}

// goSource writes every .go file under GOROOT/src and GOROOT/test, in
// lexical path order, as JSONL documents {"id": path from GOROOT, "text":
// source}, perDoc documents a file, and returns the files in order. Without
// the sources it skips the test, or fails it when CI is set.
func goSource(t *testing.T, name string, perFile int) []string {
	t.Helper()
	unavailable := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: "+format, args...)
		}
		t.Skipf(format, args...)
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		unavailable("go env GOROOT: %v", err)
	}
	root := strings.TrimSpace(string(out))
	var paths []string
	for _, dir := range []string{"src", "test"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
				paths = append(paths, p)
			}
			return err
		})
		if err != nil {
			unavailable("GOROOT sources unavailable: %v", err)
		}
	}
	if len(paths) < 10_000 {
		unavailable("only %d .go files under %s/src and %s/test; want 10,000", len(paths), root, root)
	}
	slices.Sort(paths)
	dir := filepath.Join(fixtures, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var inputs []string
	for i := 0; i < len(paths); i += perFile {
		file := filepath.Join(dir, fmt.Sprintf("part-%02d.jsonl", i/perFile))
		var lines [][]byte
		for _, p := range paths[i:min(i+perFile, len(paths))] {
			text, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, p)
			b, err := json.Marshal(map[string]string{"id": filepath.ToSlash(rel), "text": string(text)})
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, b)
		}
		writeLines(t, file, lines)
		inputs = append(inputs, file)
	}
	return inputs
}

var mixedOnce sync.Once
var mixedInputs, badInputs []string

// mixed builds a corpus in several files and formats (JSONL, gzip, zstd,
// text lines) with the cases that decide equivalence: near-duplicate chains
// across files, an exact copy shared by more documents than a small bucket
// cap, empty and featureless documents, ids that need quoting in pairs.tsv,
// numeric and missing ids, a numeric field with missing values; and a second
// version with bad and oversized records. Ids are unique (neardup dedup
// refuses a repeated id, and neardup-beam does not check them): ids made from
// line numbers (missing ids, text lines) are in a.jsonl past line 40 and in
// e.txt's 40 lines, numeric ids are 100,000 and up.
func mixed(t *testing.T) (good, bad []string) {
	t.Helper()
	mixedOnce.Do(func() {
		src := gencorpus(t, "mixed-src.jsonl", "-docs", "2400", "-dup", "0.35", "-max-edit", "0.25", "-seed", "7")
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		var docs []map[string]any
		for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var d map[string]any
			if err := json.Unmarshal(l, &d); err != nil {
				t.Fatal(err)
			}
			docs = append(docs, d)
		}
		r := rand.New(rand.NewPCG(3, 4))
		for i, d := range docs {
			switch r.IntN(4) {
			case 0: // no score
			case 1:
				d["score"] = nil
			default:
				d["score"] = float64(r.IntN(5))
			}
			switch i % 97 {
			case 5:
				d["id"] = float64(100000 + i) // numeric id
			case 11:
				delete(d, "id") // the line number
			case 23:
				d["id"] = fmt.Sprintf("tab\there \"%d\"", i)
			}
		}
		hot := docs[10]["text"]
		for i := 0; i < 25; i++ { // more copies than a bucket cap of 10 or 5
			docs = append(docs, map[string]any{"id": fmt.Sprintf("hot%02d", i), "text": hot, "score": float64(i % 3)})
		}
		docs = append(docs, map[string]any{"id": "empty", "text": ""}, map[string]any{"id": "punct", "text": "!!! ... ???"})
		r.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })

		dir := filepath.Join(fixtures, "mixed")
		os.MkdirAll(dir, 0o755)
		names := []string{"a.jsonl", "b.jsonl.gz", "c.jsonl.zst", "d.jsonl"}
		cut := []int{0, 700, 1300, 2000, len(docs)}
		var badLines [][]byte
		for f, name := range names {
			var lines [][]byte
			for k, d := range docs[cut[f]:cut[f+1]] {
				if _, ok := d["id"]; !ok && (f > 0 || k < 40) {
					// Line numbers repeat across files: only a.jsonl's,
					// past e.txt's 40 lines, are ids.
					d["id"] = fmt.Sprintf("noid-%d-%d", f, k)
				}
				b, _ := json.Marshal(d)
				lines = append(lines, b)
			}
			writeLines(t, filepath.Join(dir, name), lines)
			good = append(good, filepath.Join(dir, name))
			if f == 0 {
				badLines = lines
			}
		}
		// Text lines: copies of some documents (ids are line numbers, which
		// repeat the ids of other files).
		var txt [][]byte
		for i := 0; i < 40; i++ {
			txt = append(txt, []byte(strings.ReplaceAll(docs[r.IntN(len(docs))]["text"].(string), "\n", " ")))
		}
		writeLines(t, filepath.Join(dir, "e.txt"), txt)
		good = append(good, filepath.Join(dir, "e.txt"))

		// The bad version: a.jsonl with broken and oversized records,
		// the last record of the last file oversized.
		long := []byte(fmt.Sprintf(`{"id":"long","text":%q}`, strings.Repeat("word ", 10000)))
		var withBad [][]byte
		for i, l := range badLines {
			withBad = append(withBad, l)
			switch i % 150 {
			case 7:
				withBad = append(withBad, []byte(`{"id": "broken", "text": `))
			case 8:
				withBad = append(withBad, []byte(`{"id": "notext"}`))
			case 9:
				withBad = append(withBad, long)
			}
		}
		writeLines(t, filepath.Join(dir, "bad-a.jsonl"), withBad)
		bad = append([]string{filepath.Join(dir, "bad-a.jsonl")}, good[1:4]...)
		writeLines(t, filepath.Join(dir, "bad-z.jsonl"), [][]byte{[]byte(`{"id":"z1","text":"a last short document"}`), long, long})
		bad = append(bad, filepath.Join(dir, "bad-z.jsonl"))
		mixedInputs, badInputs = good, bad
	})
	if mixedInputs == nil {
		t.Fatal("mixed corpus not built")
	}
	return mixedInputs, badInputs
}

func writeLines(t *testing.T, path string, lines [][]byte) {
	t.Helper()
	w, err := corpus.Create(path) // compresses by extension
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		bw.Write(l)
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestVariants runs both drivers on the mixed corpus under options that
// exercise every verification, clustering and keep mode, capped buckets,
// multi-probe, other signatures and shingles, bad records and shards.
func TestVariants(t *testing.T) {
	good, bad := mixed(t)
	field := cluster.Policy{Kind: cluster.KeepField, Field: "score"}
	longest := cluster.Policy{Kind: cluster.KeepLongest}
	variants := []struct {
		name   string
		inputs []string
		opts   dedup.Options
		o      job.Options
	}{
		{"defaults", good, dedup.Options{}, job.Options{SingleFile: true}},
		{"defaults-sharded", good, dedup.Options{}, job.Options{ShardLines: 40, Rounds: 1, Partitions: 64}},
		{"star-longest-estimate", good, dedup.Options{Cluster: dedup.Star, Keep: longest, Verify: dedup.VerifyEstimate, Threshold: 0.6}, job.Options{SingleFile: true}},
		{"none-field-cap10", good, dedup.Options{Verify: dedup.VerifyNone, Keep: field, BucketCap: 10, Threshold: 0.7}, job.Options{SingleFile: true}},
		{"star-field-cap5-probe-sharded", good, dedup.Options{Cluster: dedup.Star, Keep: field, BucketCap: 5, Threshold: 0.5,
			Bands: lsh.Params{Bands: 10, Rows: 5, Probe: 1}}, job.Options{ShardLines: 25, Partitions: 4}},
		{"khash-k64-bits16", good, dedup.Options{Params: minhash.Params{K: 64, Scheme: minhash.KHash, Bits: 16, Seed: 9}, Threshold: 0.7}, job.Options{SingleFile: true}},
		{"char5-estimate", good, dedup.Options{Spec: mustSpec(t, "char:5"), Verify: dedup.VerifyEstimate}, job.Options{SingleFile: true}},
		{"skip-bad", bad, dedup.Options{Corpus: corpus.Options{SkipBad: true, MaxRecordBytes: 20000}, Keep: longest}, job.Options{SingleFile: true, Partitions: 2}},
		// Bucket key widths: the old 32 bits; 8 bits under no verification,
		// so that the accidental buckets (and capped ones) reach the outputs
		// and both drivers must find the same; a wide key of 5 bytes.
		{"key-bits-32-sharded", good, dedup.Options{KeyBits: 32}, job.Options{ShardLines: 40, Partitions: 16}},
		{"key-bits-8-none-cap10", good, dedup.Options{KeyBits: 8, Verify: dedup.VerifyNone, BucketCap: 10}, job.Options{SingleFile: true, Partitions: 4}},
		{"key-bits-40-estimate", good, dedup.Options{KeyBits: 40, Verify: dedup.VerifyEstimate}, job.Options{SingleFile: true, Partitions: 8}},
		{"simhash", good, dedup.Options{Sketch: sketch.SimHash, Threshold: 0.7}, job.Options{SingleFile: true, Partitions: 8}},
		{"simhash-k3-none-cap5-sharded", good, dedup.Options{Sketch: sketch.SimHash, SimHash: dedup.SimHashOptions{Hamming: 3, Blocks: 5},
			Verify: dedup.VerifyNone, BucketCap: 5, Keep: field}, job.Options{ShardLines: 25, Partitions: 4}},
		{"simhash-star-k8", good, dedup.Options{Sketch: sketch.SimHash, SimHash: dedup.SimHashOptions{Hamming: 8}, Cluster: dedup.Star, Threshold: 0.5},
			job.Options{SingleFile: true, Partitions: 1}},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			if testing.Short() && v.name != "defaults" && v.name != "star-field-cap5-probe-sharded" && v.name != "simhash" {
				t.Skip("short")
			}
			want, got, wr, gr := run(t, v.inputs, &v.opts, v.o)
			compare(t, want, got, wr, gr)
			c := wr.Counts
			if c.Empty < 2 || c.Clusters == 0 || strings.HasPrefix(v.name, "skip-bad") != (c.Bad > 0) {
				t.Errorf("the corpus misses a case: %d empty, %d clusters, %d bad", c.Empty, c.Clusters, c.Bad)
			}
			if v.opts.BucketCap > 0 && wr.Buckets.CappedBuckets == 0 {
				t.Errorf("no bucket over the cap of %d", v.opts.BucketCap)
			}
		})
	}
}

func mustSpec(t *testing.T, s string) shingle.Spec {
	t.Helper()
	sp, err := shingle.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// TestDegenerate: inputs with no pairs at all (an empty file, only empty
// documents, only bad records) still give every output, as dedup does.
func TestDegenerate(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"empty.jsonl":  "",
		"blank.jsonl":  "{\"id\":\"e1\",\"text\":\"\"}\n{\"id\":\"e2\",\"text\":\"...\"}\n",
		"broken.jsonl": "{\"id\":\"b1\",\"text\":\"one two three four five six\"}\n{not json\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, filepath.Join(dir, n))
		}
		return out
	}
	cases := []struct {
		name   string
		inputs []string
		opts   dedup.Options
	}{
		{"empty-file", in("empty.jsonl"), dedup.Options{}},
		{"empty-documents", in("blank.jsonl", "empty.jsonl"), dedup.Options{}},
		{"bad-skipped", in("broken.jsonl", "blank.jsonl"), dedup.Options{Corpus: corpus.Options{SkipBad: true}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, single := range []bool{true, false} {
				want, got, wr, gr := run(t, c.inputs, &c.opts, job.Options{SingleFile: single})
				compare(t, want, got, wr, gr)
			}
		})
	}
}

// TestBadRecordFails: without --skip-bad a bad record fails the job, naming
// the file and line, as it fails neardup dedup.
func TestBadRecordFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "broken.jsonl")
	os.WriteFile(path, []byte("{\"id\":\"b1\",\"text\":\"one two three four five six\"}\n{not json\n"), 0o644)
	_, err := job.Run(context.Background(), []string{path}, t.TempDir(), &job.Options{Run: runPrism})
	if err == nil || !strings.Contains(err.Error(), "broken.jsonl:2:") {
		t.Errorf("got error %v; want one naming broken.jsonl line 2", err)
	}
}

// TestOptionsRefused: job options out of range fail before any pipeline
// runs (a negative Rounds or ShardLines ran with the default before).
func TestOptionsRefused(t *testing.T) {
	tfidf := &dedup.Options{Sketch: sketch.SimHash, SimHash: dedup.SimHashOptions{Weight: sigfile.TFIDF}}
	for _, o := range []job.Options{{Rounds: -1}, {Rounds: job.MaxRounds + 1}, {ShardLines: -1}, {Partitions: 3}, {Partitions: -4}, {Dedup: tfidf}} {
		o.Run = func(context.Context, *beam.Pipeline) error { t.Fatal("a pipeline ran"); return nil }
		_, err := job.Run(context.Background(), []string{sample}, t.TempDir(), &o)
		if !errors.Is(err, dedup.ErrInvalidOptions) {
			t.Errorf("%+v: err = %v; want ErrInvalidOptions", o, err)
		}
	}
}

// TestCoreDependencyVersions checks that the nested module builds the core
// packages with the same versions of their dependencies as the core module
// (a newer golang.org/x/text, say, could change Unicode normalisation and so
// the features): the outputs could not be equal otherwise. Beam raises
// only a decompressor (lz4, for Parquet pages).
func TestCoreDependencyVersions(t *testing.T) {
	list := func(dir string) map[string]string {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}",
			"github.com/neardup/neardup/dedup")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list in %s: %v", dir, err)
		}
		m := map[string]string{}
		for _, l := range strings.Split(string(out), "\n") {
			if p, v, ok := strings.Cut(l, " "); ok && p != "github.com/neardup/neardup" {
				m[p] = v
			}
		}
		return m
	}
	core, nested := list(repoRoot), list(".")
	if len(core) == 0 {
		t.Fatal("no dependencies listed")
	}
	// Codecs whose every correct version decodes the same bytes, which Beam's
	// own dependencies require at a later version.
	codecs := map[string]bool{"github.com/pierrec/lz4/v4": true}
	for p, v := range core {
		if nested[p] != v && !codecs[p] {
			t.Errorf("%s: the core module uses %s, the beam module %s", p, v, nested[p])
		}
	}
}
