package dedup

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/shingle"

	"github.com/neardup/neardup/internal/cputime"
)

// shortTexts returns n texts of 20–45 words drawn from a vocabulary of
// 50,000, like the short documents of issue 12 (median about 33 words).
func shortTexts(n int) ([][]byte, int64) {
	rng := rand.New(rand.NewPCG(33, 1))
	texts := make([][]byte, n)
	var size int64
	for i := range texts {
		words := make([]string, 20+rng.IntN(26))
		for w := range words {
			words[w] = "w" + strings.Repeat("x", rng.IntN(6)) + string(rune('a'+rng.IntN(26))) + string(rune('a'+rng.IntN(26))) + string(rune('a'+rng.IntN(26)))
		}
		texts[i] = []byte(strings.Join(words, " "))
		size += int64(len(texts[i]))
	}
	return texts, size
}

// BenchmarkCandidateDocument is the work exact verification does for one
// document in a candidate pair under MinHash (word:5, K = 128), on short
// texts: its feature set and its signature, the signature from the text
// (sign=text: shingled twice, before) or from the feature set (sign=set:
// sketch.FeatureSigner, once).
func BenchmarkCandidateDocument(b *testing.B) {
	texts, size := shortTexts(4096)
	job, sk := wordJob(b)
	for _, from := range []string{"text", "set"} {
		b.Run("sign="+from, func(b *testing.B) {
			v, err := job.NewVerifier(sk)
			if err != nil {
				b.Fatal(err)
			}
			k, err := sk.NewSketcher()
			if err != nil {
				b.Fatal(err)
			}
			fs := k.(sketch.FeatureSigner)
			var feats, sig []uint64
			b.SetBytes(size)
			b.ReportAllocs()
			cpu0 := cputime.Process()
			for b.Loop() {
				for _, t := range texts {
					feats = v.Features(feats, t)
					if from == "text" {
						sig, _ = k.Sign(sig[:0], t)
					} else {
						sig, _ = fs.SignFeatures(sig[:0], feats)
					}
				}
			}
			cputime.ReportPerOp(b, cputime.Process()-cpu0)
		})
	}
}

// BenchmarkKeptWrite writes 512 MiB (enough for the page cache to fill
// and the kernel to throttle and reclaim, as it does for the GB of a
// kept.jsonl; 64 MiB shows neither), in the 256 KiB pieces corpus.CopyKept
// hands over, to a new file and syncs it, as kept.jsonl is written and
// committed: through a 1 MiB bufio.Writer on the file (way=buffered,
// before) or through a directWriter (way=direct: O_DIRECT where the file
// system takes it). cpu-s/op counts the kernel's copies.
func BenchmarkKeptWrite(b *testing.B) {
	const total, piece = 512 << 20, 256 << 10
	data := make([]byte, piece)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	dir := b.TempDir()
	for _, way := range []string{"buffered", "direct"} {
		b.Run("way="+way, func(b *testing.B) {
			b.SetBytes(total)
			cpu0 := cputime.Process()
			for b.Loop() {
				writeBenchFile(b, filepath.Join(dir, "kept"), func(f *os.File, name string) error {
					if way == "buffered" {
						w := bufio.NewWriterSize(f, 1<<20)
						for range total / piece {
							w.Write(data)
						}
						return w.Flush()
					}
					direct, _ := openDirect(name)
					w := newDirectWriter(f, direct, directBufSize)
					for range total / piece {
						w.Write(data)
					}
					return w.close()
				})
			}
			cputime.ReportPerOp(b, cputime.Process()-cpu0)
		})
	}
}

// writeBenchFile creates the file name, has write fill it, syncs, closes and
// removes it, and fails b on the first error: one iteration of a benchmark
// of an output's write.
func writeBenchFile(b *testing.B, name string, write func(f *os.File, name string) error) {
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	err = write(f, name)
	if err == nil {
		err = f.Sync()
	}
	f.Close()
	os.Remove(name)
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFeatureSets is featureSets' work for one chunk of documents after
// another: a fifth of 16,384 short JSON Lines records (as at 5M, where 0.93M
// documents are in candidate pairs), 64 to a chunk, read back from the
// input (textReader.each) and made into feature sets (word:5), with the
// texts kept by their records' locations and parsed again (way=record,
// before) or by the texts' own locations (way=text: textLocOf, no parsing).
func BenchmarkFeatureSets(b *testing.B) {
	texts, _ := shortTexts(16384)
	p := filepath.Join(b.TempDir(), "in.jsonl")
	var sb strings.Builder
	for i, t := range texts {
		fmt.Fprintf(&sb, "{\"id\":\"doc-%d\",\"text\":\"%s\",\"source\":\"bench\"}\n", i, t)
	}
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	job, sk := wordJob(b)
	var docs []uint32
	var size int64
	for d := 0; d < len(texts); d += 5 {
		docs, size = append(docs, uint32(d)), size+int64(len(texts[d]))
	}
	copts := &corpus.Options{}
	for _, way := range []string{"record", "text"} {
		b.Run("way="+way, func(b *testing.B) {
			ts := newTextStore(b.TempDir(), 1<<30)
			defer ts.Close()
			rd, err := corpus.NewReader([]string{p}, copts)
			if err != nil {
				b.Fatal(err)
			}
			parser, err := corpus.NewParser(copts)
			if err != nil {
				b.Fatal(err)
			}
			var batch corpus.Batch
			for rd.Next(&batch) == nil {
				for i := range batch.Records {
					rec := &batch.Records[i]
					var doc corpus.Document
					if err := parser.Parse(rec, &doc); err != nil {
						b.Fatal(err)
					}
					l := locOf(rec)
					if way == "text" {
						l = textLocOf(rec, &doc)
					}
					if err := ts.appendAt(&l); err != nil {
						b.Fatal(err)
					}
				}
			}
			rd.Close()
			v, err := job.NewVerifier(sk)
			if err != nil {
				b.Fatal(err)
			}
			tr, err := ts.newReader(copts)
			if err != nil {
				b.Fatal(err)
			}
			var feats []uint64
			chunk := make([]uint32, 0, 64)
			b.SetBytes(size)
			cpu0 := cputime.Process()
			for b.Loop() {
				for lo := 0; lo < len(docs); lo += 64 {
					chunk = append(chunk[:0], docs[lo:min(lo+64, len(docs))]...)
					if err := tr.each(chunk, func(_ int, text []byte) error {
						feats = v.Features(feats, text)
						return nil
					}); err != nil {
						b.Fatal(err)
					}
				}
			}
			cputime.ReportPerOp(b, cputime.Process()-cpu0)
		})
	}
}

// wordJob returns the default job of the word:5 spec and its sketch.
func wordJob(b *testing.B) (jobspec.Job, sketch.Sketch) {
	spec, err := shingle.Parse("word:5")
	if err != nil {
		b.Fatal(err)
	}
	job, err := (&Options{Spec: spec}).EnsureDefaults().Job()
	if err != nil {
		b.Fatal(err)
	}
	sk, err := job.Sketch.New()
	if err != nil {
		b.Fatal(err)
	}
	return job, sk
}
