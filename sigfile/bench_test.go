package sigfile_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
)

// benchCases are the sketches of the benchmarks: the default MinHash
// signature (128 32-bit slots, 512 bytes), a compact one (128 8-bit slots)
// and a SimHash fingerprint (8 bytes), each record with an id of 8–16 bytes.
var benchCases = []struct {
	name string
	h    sigfile.Header
}{
	{"minhash-k128-b32", sigfile.MinHashHeader(shingle.Prose, minhash.Params{})},
	{"minhash-k128-b8", sigfile.MinHashHeader(shingle.Prose, minhash.Params{Bits: 8})},
	{"simhash", sigfile.SimHashHeader(shingle.Prose, sigfile.SimHashParams{})},
}

const benchRecords = 20000

func benchRecs(h sigfile.Header) []record {
	return randomRecords(rand.New(rand.NewPCG(11, 12)), h, benchRecords, 8)
}

func reportRecords(b *testing.B) {
	b.ReportMetric(float64(benchRecords)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkWrite writes benchRecords records to io.Discard; bytes are the
// file's.
func BenchmarkWrite(b *testing.B) {
	for _, c := range benchCases {
		b.Run(c.name, func(b *testing.B) {
			recs := benchRecs(c.h)
			b.SetBytes(int64(len(encode(b, c.h, recs))))
			b.ReportAllocs()
			for b.Loop() {
				w, err := sigfile.NewWriter(io.Discard, c.h)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range recs {
					w.Add(r.id, r.sig)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			reportRecords(b)
		})
	}
}

// BenchmarkRead reads a file of benchRecords records from memory, checking
// every checksum.
func BenchmarkRead(b *testing.B) {
	for _, c := range benchCases {
		b.Run(c.name, func(b *testing.B) {
			data := encode(b, c.h, benchRecs(c.h))
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var rec sigfile.Record
			var sink uint64
			for b.Loop() {
				r, err := sigfile.NewReader(bytes.NewReader(data), "bench", nil)
				if err != nil {
					b.Fatal(err)
				}
				for {
					err := r.Next(&rec)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					sink += rec.Sig[0]
				}
			}
			reportRecords(b)
			_ = sink
		})
	}
}

// BenchmarkFile writes a file with Create (fsync and rename included) and
// reads it back with Open (from the page cache), the default signature.
func BenchmarkFile(b *testing.B) {
	c := benchCases[0]
	recs := benchRecs(c.h)
	size := int64(len(encode(b, c.h, recs)))
	dir := b.TempDir()
	path := filepath.Join(dir, "sigs")
	b.Run("create", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			w, err := sigfile.Create(path, c.h)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range recs {
				w.Add(r.id, r.sig)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
		reportRecords(b)
	})
	b.Run("open", func(b *testing.B) {
		b.SetBytes(size)
		var rec sigfile.Record
		for b.Loop() {
			r, err := sigfile.Open(path, nil)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for ; r.Next(&rec) == nil; n++ {
			}
			r.Close()
			if n != benchRecords {
				b.Fatal(fmt.Sprint(n, " records"))
			}
		}
		reportRecords(b)
	})
}
