package dedup

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/cputime"
)

// BenchmarkSignerDocuments is a worker's work on short documents under the
// exact pass, as in the sign stage of s5m at --memory 1GiB: batches of
// 4,096 documents of 3-5 fragments of 4-14 consecutive words of the bundled
// articles (about 33 words), 7 % of them copies of an earlier one, through
// signer.begin and signer.document, against the pass's table holding
// 4,605,510 other texts (what it holds at 1 GiB on s5m), so that each
// lookup of a new text misses the caches as it does there. Signing, band
// keys and entries included; the collector's work not. cpu-ns/op is the
// process's CPU time per document; SetBytes counts the first text's bytes,
// for scale only.
func BenchmarkSignerDocuments(b *testing.B) {
	const batch = 4096
	base := readJSONL(b, "../testdata/articles_1000.jsonl")
	r := rand.New(rand.NewPCG(7, 8))
	var texts []string
	for range 64 * batch {
		if len(texts) > 0 && r.IntN(100) < 7 {
			texts = append(texts, texts[r.IntN(len(texts))])
			continue
		}
		var parts []string
		for range 3 + r.IntN(3) {
			w := strings.Fields(base[r.IntN(len(base))].Text)
			n := 4 + r.IntN(11)
			i := r.IntN(max(1, len(w)-n))
			parts = append(parts, strings.Join(w[i:min(len(w), i+n)], " "))
		}
		texts = append(texts, strings.Join(parts, ". "))
	}
	opts := &Options{}
	job, err := opts.Job()
	if err != nil {
		b.Fatal(err)
	}
	sk, err := job.Sketch.New()
	if err != nil {
		b.Fatal(err)
	}
	run := &run{opts: opts, job: job, sketch: sk, exact: newExactPass(1<<30, b.TempDir())}
	for i := range run.exact.limit {
		if _, err := run.exact.resolve([2]uint64{r.Uint64(), r.Uint64()}, uint32(i)); err != nil {
			b.Fatal(err)
		}
	}
	// text=parser: each text in the parser's buffer (escapes decoded),
	// texts kept by no one (--verify estimate); text=record: each text bytes
	// of its record, which is stored in a file, as under --verify exact on
	// a JSON Lines file (the worker notes the text's location, textStore).
	for _, inRecord := range []bool{false, true} {
		name := "text=parser"
		if inRecord {
			name = "text=record"
		}
		b.Run(name, func(b *testing.B) {
			w, err := run.newSigner()
			if err != nil {
				b.Fatal(err)
			}
			w.keepTx, w.locate = inRecord, inRecord
			bt := &corpus.Batch{Records: make([]corpus.Record, batch)}
			var raws [][]byte
			if inRecord {
				for i, t := range texts {
					raws = append(raws, fmt.Appendf(nil, `{"id":"d%d","text":"%s"}`, i, t))
				}
			}
			var out signed
			var doc corpus.Document
			b.SetBytes(int64(len(texts[0])))
			b.ReportAllocs()
			cpu := cputime.Process()
			for i := 0; b.Loop(); i++ {
				j := i % batch
				if j == 0 {
					for k := range bt.Records {
						bt.Records[k] = corpus.Record{Index: int64(i + k), File: "f", Line: int64(i + k + 1)}
						if inRecord {
							bt.Records[k].Raw, bt.Records[k].Source = raws[(i+k)%len(texts)], "f"
						}
					}
					w.begin(&out, bt)
				}
				doc.ID = fmt.Appendf(doc.ID[:0], "d%d", i)
				t := texts[i%len(texts)]
				if inRecord {
					raw := bt.Records[j].Raw
					doc.Text = raw[len(raw)-2-len(t) : len(raw)-2]
				} else {
					doc.Text = append(doc.Text[:0], t...)
				}
				if err := w.document(&out, &bt.Records[j], &doc); err != nil {
					b.Fatal(err)
				}
			}
			if cpu := cputime.Process() - cpu; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
