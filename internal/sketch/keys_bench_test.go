package sketch

import (
	"math/rand/v2"
	"testing"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"

	"github.com/neardup/neardup/internal/cputime"
)

var sinkKeys []uint64

// BenchmarkAppendKeys is the band keys of one signature as the batch driver
// makes them (Sketcher.AppendKeys): the defaults of neardup dedup at
// threshold 0.8 (K = 128 slots of 32 bits, 16 bands of 6 rows, 64-bit keys),
// and other slot widths, probes and key widths. SetBytes counts the
// signature's bytes; cpu-ns/op is the process's CPU time per call, the
// measure on a shared machine.
func BenchmarkAppendKeys(b *testing.B) {
	cases := []struct {
		name    string
		params  minhash.Params
		bands   lsh.Params
		keyBits int
	}{
		{"bits=32/16x6", minhash.Params{K: 128, Bits: 32}, lsh.Params{Bands: 16, Rows: 6}, 0},
		{"bits=32/16x6/keybits=32", minhash.Params{K: 128, Bits: 32}, lsh.Params{Bands: 16, Rows: 6}, 32},
		{"bits=32/16x8/probe=1", minhash.Params{K: 128, Bits: 32}, lsh.Params{Bands: 16, Rows: 8, Probe: 1}, 0},
		{"bits=64/16x6", minhash.Params{K: 128, Bits: 64}, lsh.Params{Bands: 16, Rows: 6}, 0},
		{"bits=16/20x10", minhash.Params{K: 256, Bits: 16}, lsh.Params{Bands: 20, Rows: 10}, 0},
	}
	for _, c := range cases {
		c.params.EnsureDefaults()
		cfg := Config{Spec: mustSpec(b, "word:5"), Params: c.params, Bands: c.bands, KeyBits: c.keyBits}
		s, err := cfg.New()
		if err != nil {
			b.Fatal(err)
		}
		sk, err := s.NewSketcher()
		if err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		const n = 64 // signatures, cycled
		sigs := make([]uint64, n*s.Words())
		for i := range sigs {
			sigs[i] = r.Uint64()
		}
		b.Run(c.name, func(b *testing.B) {
			w := s.Words()
			b.SetBytes(int64(8 * w))
			b.ReportAllocs()
			keys := sk.AppendKeys(nil, sigs[:w])
			i := 0
			cpu := cputime.Process()
			for b.Loop() {
				keys = sk.AppendKeys(keys[:0], sigs[i*w:(i+1)*w])
				i = (i + 1) % n
			}
			if cpu := cputime.Process() - cpu; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
			sinkKeys = keys
		})
	}
}
