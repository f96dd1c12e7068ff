//go:build unix

package corpuspipe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/corpuspipe"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"

	"github.com/neardup/neardup/internal/cputime"
)

// shortRecords returns count JSON Lines records of short web-like documents,
// as encoding/json writes them: {"id", "url", "text"}, the texts runs of 24
// to 54 consecutive words of the bundled news sample (20 to 50 word
// 5-grams, the lengths cycling; the sample is reused when it runs out),
// about 310 bytes a record. The same records as package corpus's
// BenchmarkParseShort.
func shortRecords(tb testing.TB, count int) []byte {
	tb.Helper()
	data, err := os.ReadFile("../../testdata/articles_1000.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	var texts []string
	for line := range bytes.Lines(data) {
		var rec struct{ Text string }
		if err := json.Unmarshal(line, &rec); err != nil {
			tb.Fatal(err)
		}
		texts = append(texts, rec.Text)
	}
	var out bytes.Buffer
	for docs := 0; docs < count; {
		for _, text := range texts {
			words := strings.Fields(text)
			for i := 0; docs < count; docs++ {
				w := 24 + docs%31
				if i+w > len(words) {
					break
				}
				line, err := json.Marshal(struct {
					ID   string `json:"id"`
					URL  string `json:"url"`
					Text string `json:"text"`
				}{fmt.Sprintf("doc-%08d", docs), fmt.Sprintf("https://example.com/%s/%d", strings.ToLower(words[i]), docs), strings.Join(words[i:i+w], " ")})
				if err != nil {
					tb.Fatal(err)
				}
				out.Write(line)
				out.WriteByte('\n')
				i += w
			}
		}
	}
	return out.Bytes()
}

// signed is a batch's result as neardup sign makes it: ids and signatures.
type signed struct {
	ids   []byte
	idEnd []int
	sigs  minhash.Signature
}

// BenchmarkShortDocs measures the per-document cost of signing short
// documents (shortRecords, 100,000 of them in a JSON Lines file) end to end
// and without the pipeline, to separate the pipeline's overhead from the
// hashing:
//
//	read         corpus.Reader alone: read the file, cut the lines
//	parse        read, then Parser.Parse each record, on one goroutine
//	sign         read, parse and SignText (K = 128, word 5-grams), one goroutine
//	run-parse    corpuspipe.Run with workers that only parse
//	run-sign     corpuspipe.Run with the Worker neardup sign uses (SignText,
//	             ids and signatures kept in the batch's result)
//
// run-parse − parse is the hand-off and bookkeeping of the pipeline per
// document; sign − parse the shingling and hashing. The run-* benchmarks run
// with 1 and 2 workers; their cpu-ns/doc counts every goroutine's CPU time.
func BenchmarkShortDocs(b *testing.B) {
	const count = 100000
	data := shortRecords(b, count)
	path := filepath.Join(b.TempDir(), "short.jsonl")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	open := func(b *testing.B) *corpus.Reader {
		r, err := corpus.NewReader([]string{path}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	// sequential reads every batch and hands each record to doc.
	sequential := func(b *testing.B, doc func(rec *corpus.Record)) {
		r := open(b)
		defer r.Close()
		var batch corpus.Batch
		for {
			err := r.Next(&batch)
			if err == io.EOF {
				return
			}
			if err != nil {
				b.Fatal(err)
			}
			for i := range batch.Records {
				doc(&batch.Records[i])
			}
		}
	}
	measure := func(b *testing.B, pass func(b *testing.B)) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		c0 := cputime.Process()
		for b.Loop() {
			pass(b)
		}
		n := float64(b.N) * count
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/doc")
		if cpu := cputime.Process() - c0; cpu > 0 {
			b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/doc")
		}
	}
	b.Run("read", func(b *testing.B) {
		measure(b, func(b *testing.B) {
			docs := 0
			sequential(b, func(*corpus.Record) { docs++ })
			if docs != count {
				b.Fatalf("%d documents; want %d", docs, count)
			}
		})
	})
	b.Run("parse", func(b *testing.B) {
		p, _ := corpus.NewParser(nil)
		var doc corpus.Document
		measure(b, func(b *testing.B) {
			sequential(b, func(rec *corpus.Record) {
				if err := p.Parse(rec, &doc); err != nil {
					b.Fatal(err)
				}
			})
		})
	})
	b.Run("sign", func(b *testing.B) {
		p, _ := corpus.NewParser(nil)
		var doc corpus.Document
		sh := shingle.MustNew(shingle.Prose)
		h := minhash.MustNewHasher(minhash.Params{})
		var sig minhash.Signature
		measure(b, func(b *testing.B) {
			sequential(b, func(rec *corpus.Record) {
				if err := p.Parse(rec, &doc); err != nil {
					b.Fatal(err)
				}
				sig = h.SignText(sig[:0], sh, doc.Text)
			})
		})
	})
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("run-parse/workers=%d", workers), func(b *testing.B) {
			measure(b, func(b *testing.B) {
				r := open(b)
				defer r.Close()
				docs := 0
				_, err := corpuspipe.Run(context.Background(), r, nil, workers,
					func() (corpuspipe.Worker[int], error) {
						return corpuspipe.Worker[int]{
							Document: func(res *int, _ *corpus.Record, _ *corpus.Document) error { *res++; return nil },
						}, nil
					},
					func(bt *corpuspipe.Batch[int]) error { docs += bt.Result; return nil })
				if err != nil || docs != count {
					b.Fatalf("%d documents, %v; want %d", docs, err, count)
				}
			})
		})
		b.Run(fmt.Sprintf("run-sign/workers=%d", workers), func(b *testing.B) {
			measure(b, func(b *testing.B) {
				r := open(b)
				defer r.Close()
				docs := 0
				_, err := corpuspipe.Run(context.Background(), r, nil, workers,
					func() (corpuspipe.Worker[signed], error) {
						sh := shingle.MustNew(shingle.Prose)
						h := minhash.MustNewHasher(minhash.Params{})
						return corpuspipe.Worker[signed]{
							Begin: func(res *signed, _ *corpus.Batch) {
								res.ids, res.idEnd, res.sigs = res.ids[:0], res.idEnd[:0], res.sigs[:0]
							},
							Document: func(res *signed, _ *corpus.Record, doc *corpus.Document) error {
								res.sigs = h.SignText(res.sigs, sh, doc.Text)
								res.ids = append(res.ids, doc.ID...)
								res.idEnd = append(res.idEnd, len(res.ids))
								return nil
							},
						}, nil
					},
					func(bt *corpuspipe.Batch[signed]) error { docs += len(bt.Result.idEnd); return nil })
				if err != nil || docs != count {
					b.Fatalf("%d documents, %v; want %d", docs, err, count)
				}
			})
		})
	}
}
