// Package compare measures neardup against other MinHash LSH libraries on the
// same input. It is a separate module so that the core module does not
// depend on them.
package compare

import (
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	minhashlsh "github.com/ekzhu/minhash-lsh"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// goSourceFeatures shingles every .go file under GOROOT/src (word 5-grams).
func goSourceFeatures(b *testing.B) ([][]uint64, int64) {
	sh := shingle.MustNew(shingle.Prose)
	var out [][]uint64
	var size int64
	root := filepath.Join(runtime.GOROOT(), "src")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		size += int64(len(data))
		out = append(out, sh.AppendFeatures(nil, data))
		return nil
	})
	return out, size
}

// BenchmarkEkzhuMinhashLSH: github.com/ekzhu/minhash-lsh on the shingled Go
// source tree: signatures (128 hash functions over each shingle's 8 bytes),
// index, and a query per document — after shingling.
func BenchmarkEkzhuMinhashLSH(b *testing.B) {
	feats, size := goSourceFeatures(b)
	b.SetBytes(size)
	var cands int
	cpu0 := cpuTime()
	for b.Loop() {
		idx := minhashlsh.NewMinhashLSH32(128, 0.8)
		sigs := make([][]uint64, len(feats))
		var buf [8]byte
		for i, fs := range feats {
			m := minhashlsh.NewMinhash(1, 128)
			for _, f := range fs {
				binary.LittleEndian.PutUint64(buf[:], f)
				m.Push(buf[:])
			}
			sigs[i] = m.Signature()
			idx.Add(i, sigs[i])
		}
		idx.Index()
		cands = 0
		for _, s := range sigs {
			cands += len(idx.Query(s)) - 1
		}
	}
	reportCPU(b, cpuTime()-cpu0)
	b.ReportMetric(float64(cands/2), "candidates")
}

// BenchmarkNeardupOneCore: neardup's signatures, band keys and candidate
// pairs on the same features, on one core.
func BenchmarkNeardupOneCore(b *testing.B) {
	feats, size := goSourceFeatures(b)
	params := minhash.Params{K: 128}
	params.EnsureDefaults()
	bands, _ := lsh.ForRecall(0.8, 128, 0.99)
	b.SetBytes(size)
	var pairs int
	cpu0 := cpuTime()
	for b.Loop() {
		h := minhash.MustNewHasher(params)
		var sig minhash.Signature
		var slots, keys, entries []uint64
		for i, fs := range feats {
			sig = h.Sign(sig[:0], fs)
			slots = params.AppendSlots(slots[:0], sig)
			keys = bands.AppendKeys(keys[:0], slots)
			entries = lsh.AppendEntries(entries, keys, uint32(i), 32)
		}
		got, _, err := lsh.Candidates(nil, entries, 32, &lsh.CandidateOptions{Workers: 1})
		if err != nil {
			b.Fatal(err)
		}
		pairs = len(got)
	}
	reportCPU(b, cpuTime()-cpu0)
	b.ReportMetric(float64(pairs), "candidates")
}
