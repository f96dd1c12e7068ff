package index

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/minhash"
)

// benchDocs is the number of documents an index holds before a benchmark.
const benchDocs = 20000

// benchSig returns a random signature under p: the bucket keys of a new,
// unrelated document. Signing texts would cost far more than the index.
func benchSig(rng *rand.Rand, p *minhash.Params) minhash.Signature {
	sig := make(minhash.Signature, p.Words())
	for i := range sig {
		sig[i] = rng.Uint64()
	}
	if r := p.K * p.Bits % 64; r != 0 {
		sig[len(sig)-1] &= 1<<r - 1
	}
	return sig
}

// benchNear returns a copy of sig with 3 of its words (6 of 128 32-bit
// slots) redrawn: similarity about 0.95, above the default threshold.
func benchNear(rng *rand.Rand, sig minhash.Signature) minhash.Signature {
	out := append(minhash.Signature(nil), sig...)
	for range 3 {
		out[rng.IntN(len(out)-1)] = rng.Uint64()
	}
	return out
}

// benchIndex fills x with benchDocs random documents and returns their
// signatures.
func benchIndex(b *testing.B, x Index) []minhash.Signature {
	b.Helper()
	p := x.Config().Params
	rng := rand.New(rand.NewPCG(1, 2))
	sigs := make([]minhash.Signature, benchDocs)
	docs := make([]Doc, 0, 500)
	for i := range sigs {
		sigs[i] = benchSig(rng, &p)
		docs = append(docs, Doc{ID: fmt.Sprintf("doc-%06d", i), Sig: sigs[i]})
		if len(docs) == cap(docs) || i == len(sigs)-1 {
			if err := x.Insert(ctx, docs); err != nil {
				b.Fatal(err)
			}
			docs = docs[:0]
		}
	}
	return sigs
}

// benchOps runs the operations of the service on x, which holds the
// documents of sigs: queries that match nothing and queries that match one
// document, check-and-inserts of new documents and of near duplicates (not
// stored), and Get. Each op is one document; b.SetBytes counts its
// signature's bytes.
func benchOps(b *testing.B, x Index, sigs []minhash.Signature) {
	p := x.Config().Params
	bytes := int64(p.Bytes())
	rng := rand.New(rand.NewPCG(3, 4))
	run := func(name string, op func(i int) error) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(bytes)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := op(i); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	pool := func(mk func() minhash.Signature) []minhash.Signature {
		s := make([]minhash.Signature, 1024)
		for i := range s {
			s[i] = mk()
		}
		return s
	}
	fresh := pool(func() minhash.Signature { return benchSig(rng, &p) })
	near := pool(func() minhash.Signature { return benchNear(rng, sigs[rng.IntN(len(sigs))]) })
	run("Query/miss", func(i int) error {
		ms, err := x.Query(ctx, fresh[i%len(fresh)], nil)
		if err == nil && len(ms) != 0 {
			err = fmt.Errorf("a random signature matched %v", ms)
		}
		return err
	})
	run("Query/hit", func(i int) error {
		ms, err := x.Query(ctx, near[i%len(near)], nil)
		if err == nil && len(ms) == 0 {
			err = fmt.Errorf("a near copy matched nothing")
		}
		return err
	})
	run("Get", func(i int) error {
		_, err := x.Get(ctx, fmt.Sprintf("doc-%06d", i%len(sigs)))
		return err
	})
	run("CheckAndInsert/duplicate", func(i int) error {
		res, err := x.CheckAndInsert(ctx, []Doc{{ID: fmt.Sprintf("dup-%d", i), Sig: near[i%len(near)]}}, nil)
		if err == nil && res[0].Status != Duplicate {
			err = fmt.Errorf("a near copy is %v", res[0].Status)
		}
		return err
	})
	n := 0
	run("CheckAndInsert/new", func(i int) error {
		n++
		res, err := x.CheckAndInsert(ctx, []Doc{{ID: fmt.Sprintf("new-%d", n), Sig: benchSig(rng, &p)}}, nil)
		if err == nil && res[0].Status != New {
			err = fmt.Errorf("a random signature is %v", res[0].Status)
		}
		return err
	})
}

// BenchmarkPebble measures the operations on a Pebble index of benchDocs
// documents, flushed and compacted, without WAL syncs (NoSync: the fsync,
// shared by concurrent writers in service, would hide the index's own cost).
func BenchmarkPebble(b *testing.B) {
	x, err := Open(filepath.Join(b.TempDir(), "index"), &Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	sigs := benchIndex(b, x)
	if err := x.Flush(ctx, true); err != nil { // a settled index, as a service's: no compaction under the timer
		b.Fatal(err)
	}
	benchOps(b, x, sigs)
}

// BenchmarkRedis measures the operations on a Redis index of benchDocs
// documents (a standalone server on loopback; skipped without one).
func BenchmarkRedis(b *testing.B) {
	addrs := redisAddrs(false)
	x, err := OpenRedis(ctx, &RedisOptions{Addrs: addrs, Prefix: fmt.Sprintf("ndbench:%x:", rand.Uint64())})
	if err != nil {
		b.Skipf("no Redis at %v: %v", addrs, err)
	}
	defer func() {
		x.Drop(ctx)
		x.Close()
	}()
	benchOps(b, x, benchIndex(b, x))
}

// BenchmarkMemory measures the operations on a Memory index of benchDocs
// documents: the engine's own cost, without storage.
func BenchmarkMemory(b *testing.B) {
	x, err := NewMemory(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	benchOps(b, x, benchIndex(b, x))
}

// BenchmarkPebbleKeys compares the bucket-key widths on a Pebble index of
// benchDocs documents, as BenchmarkPebble: the service's operations, and
// (the Size sub-benchmark, which times nothing) the bytes per document of
// the sstables and of the postings in them, after a full compaction.
// Compare with benchstat -col /keys.
func BenchmarkPebbleKeys(b *testing.B) {
	for _, w := range []int{NarrowKeyBytes, WideKeyBytes} {
		b.Run(fmt.Sprintf("keys=%d", w), func(b *testing.B) {
			x, err := Open(filepath.Join(b.TempDir(), "index"), &Options{NoSync: true, BucketKeyBytes: w})
			if err != nil {
				b.Fatal(err)
			}
			defer x.Close()
			sigs := benchIndex(b, x)
			if err := x.Flush(ctx, true); err != nil {
				b.Fatal(err)
			}
			tables, _, postings, err := x.sizes()
			if err != nil {
				b.Fatal(err)
			}
			b.Run("Size", func(b *testing.B) {
				for b.Loop() {
				}
				b.ReportMetric(float64(tables)/benchDocs, "table-B/doc")
				b.ReportMetric(float64(postings)/benchDocs, "posting-B/doc")
			})
			benchOps(b, x, sigs)
		})
	}
}
