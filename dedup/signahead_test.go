package dedup

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/dupid"
	"github.com/neardup/neardup/internal/sketch"
)

// TestSignerAhead: a worker under the exact pass decides on and signs each
// document one call after it hashed it (signer.document), with two
// sketchers taking turns; what it makes of a batch must be what deciding
// and signing each document at once makes, written out here with one
// fresh sketcher a document: the same statuses (a copy of a text the table
// or the batch already holds is not signed; an empty text is signed and
// empty), the same findings (a later document of the batch names the
// batch's first of its hash, even one the table knew), signatures, band-key entries, texts kept, hashes and per-document
// metrics, in record order. Batches of 1 to 40 records, with records that
// do not parse (Skip) anywhere, first and last included, texts without
// features, copies next to each other, across batches and known to the
// table beforehand, under signAll too; texts that are bytes of their
// records (not copied: the worker's copies stay empty until a text is in
// the parser's buffer) and texts in the parser's buffer, each wiped as the
// parser and the reader would once they are done with it.
func TestSignerAhead(t *testing.T) {
	opts := &Options{}
	job, err := opts.Job()
	if err != nil {
		t.Fatal(err)
	}
	sk, err := job.Sketch.New()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	words := strings.Fields(strings.Repeat("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu ", 3))
	pool := make([]string, 60)
	for i := range pool {
		var b strings.Builder
		for range 8 + rng.IntN(30) {
			b.WriteString(words[rng.IntN(len(words))] + " ")
		}
		pool[i] = b.String()
	}
	pool[0], pool[1] = "", " ,.; " // no features: empty hashes (TextHash)
	pool[2] = "one two"            // too short for word:5: signed, empty

	for _, signAll := range []bool{false, true} {
		t.Run(fmt.Sprintf("signAll=%v", signAll), func(t *testing.T) {
			r := &run{opts: opts, job: job, sketch: sk, exact: newExactPass(16<<20, t.TempDir())}
			w, err := r.newSigner()
			if err != nil {
				t.Fatal(err)
			}
			w.keepTx, w.signAll = true, signAll
			// The table knows a few texts already (the collector put them).
			ref, err := sk.NewSketcher()
			if err != nil {
				t.Fatal(err)
			}
			th := ref.(sketch.TextHasher)
			for i := 3; i < 8; i++ {
				hi, lo, _ := th.TextHash([]byte(pool[i]))
				if _, err := r.exact.resolve([2]uint64{hi, lo}, uint32(1000+i)); err != nil {
					t.Fatal(err)
				}
			}
			index := int64(0)
			scratch := false // a text with features was in the parser's buffer
			for batch := range 60 {
				n := 1 + rng.IntN(40)
				if batch%7 == 0 {
					n = 1
				}
				b := &corpus.Batch{}
				var texts []string
				bad := make([]bool, n)
				for i := range n {
					texts = append(texts, pool[rng.IntN(len(pool))])
					if i > 0 && rng.IntN(5) == 0 {
						texts[i] = texts[i-1] // a copy right after its first
					}
					bad[i] = rng.IntN(9) == 0
					b.Records = append(b.Records, corpus.Record{Index: index, File: "f", Line: index + 1})
					index++
				}
				// A text is bytes of its record (the batch's memory), or
				// in the parser's buffer (escapes decoded).
				inRec := make([]bool, n)
				for i := range n {
					inRec[i] = rng.IntN(2) == 0
					b.Records[i].Raw = fmt.Appendf(nil, `{"text":"%s"}`, texts[i])
				}
				var got signed
				w.begin(&got, b)
				for i := range n {
					rec := &b.Records[i]
					if bad[i] {
						w.skip(&got, rec, nil)
						continue
					}
					doc := corpus.Document{ID: fmt.Appendf(nil, "d%d", rec.Index), Text: []byte(texts[i])}
					if inRec[i] {
						doc.Text = rec.Raw[len(`{"text":"`) : len(`{"text":"`)+len(texts[i])]
					} else {
						scratch = scratch || len(texts[i]) > 0
					}
					if err := w.document(&got, rec, &doc); err != nil {
						t.Fatal(err)
					}
					if !inRec[i] {
						clear(doc.Text) // the parser reuses its buffer
					}
				}
				if !scratch && (cap(w.texts[0]) > 0 || cap(w.texts[1]) > 0) {
					t.Fatalf("batch %d: texts copied (%d, %d bytes of capacity) though every one was bytes of its record", batch, cap(w.texts[0]), cap(w.texts[1]))
				}
				for i := range b.Records {
					clear(b.Records[i].Raw) // the reader reuses the batch
				}
				want := signAtOnce(t, r, sk, w, b, texts, bad)
				if !slices.Equal(got.docs, want.docs) || !slices.Equal(got.sigs, want.sigs) ||
					!slices.Equal(got.entries, want.entries) || !slices.Equal(got.texts, want.texts) ||
					!slices.Equal(got.hashes, want.hashes) || !slices.Equal(got.ids, want.ids) ||
					!slices.Equal(got.files, want.files) || len(got.srcs) != 0 {
					t.Fatalf("batch %d of %d records: signed\n%+v\nwant\n%+v", batch, n, got, want)
				}
				// The collector's decisions, for the next batches: every
				// text of the batch is now known.
				for x := range slices.Chunk(got.hashes, 2) {
					if _, err := r.exact.resolve([2]uint64{x[0], x[1]}, uint32(index)); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

// signAtOnce is what a worker makes of batch b (texts; bad: records that
// did not parse) deciding on and signing each document straight away, with
// a fresh sketcher each: the reference of TestSignerAhead.
func signAtOnce(t *testing.T, r *run, sk sketch.Sketch, w *signer, b *corpus.Batch, texts []string, bad []bool) signed {
	t.Helper()
	var out signed
	seen := map[[2]uint64]uint32{} // by hash, the batch's first document with it
	for i, rec := range b.Records {
		if len(out.files) == 0 {
			out.files = append(out.files, rec.File) // every record's is "f"
		}
		if bad[i] {
			out.docs = append(out.docs, docRes{index: rec.Index, line: rec.Line, status: docBad,
				idEnd: len(out.ids), textEnd: len(out.texts), entEnd: len(out.entries)})
			continue
		}
		id := fmt.Appendf(nil, "d%d", rec.Index)
		out.ids = append(out.ids, id...)
		d := docRes{index: rec.Index, line: rec.Line, length: int64(len(texts[i])), idHash: dupid.Hash(id), idEnd: len(out.ids)}
		k, err := sk.NewSketcher()
		if err != nil {
			t.Fatal(err)
		}
		text := []byte(texts[i])
		hi, lo, empty := k.(sketch.TextHasher).TextHash(text)
		if !empty {
			out.hashes = append(out.hashes, hi, lo)
			key := [2]uint64{hi, lo}
			// The batch's first document of a hash is the one later
			// documents of the batch name, whether or not the table
			// knows the hash (the collector resolves it first).
			if j, ok := seen[key]; ok {
				d.known, d.first = knownBatch, j
			} else {
				seen[key] = uint32(i)
				if f, ok, slot, gen := r.exact.lookup(key); ok {
					d.known, d.first = knownTable, f
				} else {
					d.known, d.first, d.gen = knownAbsent, uint32(slot), gen
				}
			}
			if (d.known == knownTable || d.known == knownBatch) && !w.signAll {
				d.status, d.textEnd, d.entEnd = docCopy, len(out.texts), len(out.entries)
				out.docs = append(out.docs, d)
				continue
			}
		}
		n := len(out.sigs)
		sigs, none := k.Sign(out.sigs, text)
		d.metrics = k.Metrics()
		if none {
			out.sigs = sigs[:n]
			d.status, d.textEnd, d.entEnd = docEmpty, len(out.texts), len(out.entries)
			out.docs = append(out.docs, d)
			continue
		}
		out.sigs = sigs
		out.texts = append(out.texts, text...)
		keys := k.AppendKeys(nil, sigs[n:])
		out.entries = sketch.AppendKeyEntries(out.entries, keys, w.base+uint32(rec.Index), w.keyBits)
		d.status, d.textEnd, d.entEnd = docOK, len(out.texts), len(out.entries)
		out.docs = append(out.docs, d)
	}
	return out
}
