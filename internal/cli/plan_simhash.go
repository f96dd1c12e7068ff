package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/corpuspipe"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/radix"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/plan"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
	"github.com/neardup/neardup/simhash"
)

// planSimHashFlags are plan's flags for --sketch simhash.
type planSimHashFlags struct {
	sketch  string
	weight  string
	hamming int
	blocks  int
}

func (f *planSimHashFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.sketch, "sketch", "minhash", "sketch to plan: minhash (k, slot width, bands) or simhash (Hamming distance and blocks, measured on --sample)")
	fs.StringVar(&f.weight, "weight", "tf", "with --sketch simhash: feature weights, tf or tfidf (document frequencies of the sample)")
	fs.IntVar(&f.hamming, "hamming", -1, fmt.Sprintf("with --sketch simhash: fix the Hamming distance, 0 to %d (default: the least that reaches --recall)", simhash.MaxMaxDistance))
	fs.IntVar(&f.blocks, "blocks", 0, fmt.Sprintf("with --sketch simhash: fix the blocks, hamming+1 to %d (default: the cheapest layout)", simhash.MaxBlocks))
}

// planMinHashOnly are plan's flags that mean nothing to a SimHash plan.
var planMinHashOnly = []string{"features", "doc-bytes", "precision", "fp-weight", "fn-weight", "memory", "docs-per-second",
	"background", "duplicates", "key-bits", "num-perm", "bits", "scheme"}

// runPlanSimHash is plan --sketch simhash: it measures the Hamming distance
// against exact Jaccard similarity on the sample and prints
// plan.MakeSimHash's choice of k and blocks with its arithmetic. A plan that
// reaches no recall target is printed too, then reported as an error.
func runPlanSimHash(cmd *cobra.Command, stdio IO, o *planOptions) error {
	f := &o.simhash
	flags := cmd.Flags()
	if o.sample == "" {
		return usagef("--sketch simhash needs --sample: SimHash has no S-curve to invert, so the relation between Hamming distance and Jaccard similarity is measured on a sample")
	}
	for _, name := range planMinHashOnly {
		if flags.Changed(name) {
			return usagef("--%s: a minhash plan's flag; --sketch simhash measures candidates and costs on --sample", name)
		}
	}
	var weight sigfile.Weighting
	switch f.weight {
	case "tf":
		weight = sigfile.TF
	case "tfidf":
		weight = sigfile.TFIDF
	default:
		return usagef("--weight %s: want tf or tfidf", f.weight)
	}
	if f.hamming != -1 {
		if err := jobspec.CheckHamming(f.hamming); err != nil {
			return usageError{fmt.Errorf("--hamming %d: %w", f.hamming, err)}
		}
	}
	if f.blocks != 0 {
		if f.hamming == -1 {
			return usagef("--blocks %d: fix --hamming too (the blocks a layout takes depend on it)", f.blocks)
		}
		if err := jobspec.CheckBlocks(f.blocks, f.hamming); err != nil {
			return usageError{fmt.Errorf("--blocks %d: %w", f.blocks, err)}
		}
	}
	recall := o.recall
	if !flags.Changed("recall") {
		recall = plan.DefaultSimHashRecall
	}
	if err := o.checkFlags(); err != nil {
		return err
	}
	spec, err := shingle.Parse(o.shingle)
	if err != nil {
		return usageError{fmt.Errorf("--shingle %s: %w", o.shingle, err)}
	}
	copts, err := o.corpus.build(IO{}) // a sample is a file, never standard input
	if err != nil {
		return err
	}
	sample, err := measureSimHashSample(cmd.Context(), o, copts, spec, weight)
	if err != nil {
		return err
	}
	// dedup, Beam and the index number documents in 32 bits.
	in := plan.SimHashInput{Documents: int64(o.documents), Threshold: o.threshold, Recall: recall, Blocks: f.blocks,
		DocBits: sketch.EntryDocBits, Sample: sample}
	switch f.hamming {
	case -1:
	case 0:
		in.MaxDistance = simhash.ExactMatch
	default:
		in.MaxDistance = f.hamming
	}
	p, err := plan.MakeSimHash(in)
	if p == nil {
		if errors.Is(err, plan.ErrInput) {
			return usageError{err}
		}
		return err
	}
	if o.json {
		enc := json.NewEncoder(stdio.Out)
		enc.SetIndent("", "  ")
		if e := enc.Encode(p); e != nil {
			return e
		}
	} else if _, e := fmt.Fprint(stdio.Out, p.String()); e != nil {
		return e
	}
	if err == nil {
		fmt.Fprintf(stdio.Out, "\nrun it: neardup dedup --sketch simhash --weight %s --hamming %d --blocks %d --threshold %v …\n", f.weight, p.K, p.Layout.Blocks, o.threshold)
	}
	return err
}

// measureSimHashSample reads the sample and measures it
// (plan.MeasureSimHash): every document's feature set and its fingerprint,
// made as dedup makes them (TF, or TF-IDF with the sample's document
// frequencies).
func measureSimHashSample(ctx context.Context, o *planOptions, copts corpus.Options, spec shingle.Spec, weight sigfile.Weighting) (*plan.SimHashSample, error) {
	inputs := []string{o.sample}
	c := sketch.Config{Spec: spec, Kind: sketch.SimHash, SimHash: sketch.SimHashConfig{Params: sigfile.SimHashParams{Weighting: sigfile.TF}}}
	if weight == sigfile.TFIDF {
		t, err := jobspec.CountDF(ctx, inputs, &copts, spec, o.workers)
		if err != nil {
			return nil, err
		}
		c = c.WithDF(t)
	}
	sk, err := c.New()
	if err != nil {
		return nil, err
	}
	reader, err := corpus.NewReader(inputs, &copts)
	if err != nil {
		return nil, err
	}
	defer reader.Close()
	type result struct {
		sets  [][]uint64
		fps   []uint64
		bytes int64
	}
	var sets [][]uint64
	var fps []uint64
	var total int64
	_, err = corpuspipe.Run(ctx, reader, &copts, o.workers,
		func() (corpuspipe.Worker[result], error) {
			k, err := sk.NewSketcher()
			if err != nil {
				return corpuspipe.Worker[result]{}, err
			}
			sh, err := shingle.New(spec)
			if err != nil {
				return corpuspipe.Worker[result]{}, err
			}
			var buf, scratch, sig []uint64
			return corpuspipe.Worker[result]{
				Begin: func(res *result, _ *corpus.Batch) { res.sets, res.fps, res.bytes = res.sets[:0], res.fps[:0], 0 },
				Document: func(res *result, _ *corpus.Record, doc *corpus.Document) error {
					sig, _ = k.Sign(sig[:0], doc.Text)
					buf = sh.AppendFeatures(buf[:0], doc.Text)
					if cap(scratch) < len(buf) {
						scratch = make([]uint64, len(buf))
					}
					scratch = radix.Sort(buf, scratch[:len(buf)])
					res.sets = append(res.sets, slices.Clone(slices.Compact(buf)))
					res.fps = append(res.fps, sig[0])
					res.bytes += int64(len(doc.Text))
					return nil
				},
			}, nil
		},
		func(b *corpuspipe.Batch[result]) error {
			sets = append(sets, b.Result.sets...)
			fps = append(fps, b.Result.fps...)
			total += b.Result.bytes
			return nil
		})
	if err != nil {
		return nil, err
	}
	s, err := plan.MeasureSimHash(sets, fps, total, o.sampleFloor, o.sampleDraws, 1, &eval.Options{Workers: o.workers})
	if err != nil {
		return nil, usageError{err}
	}
	return s, nil
}
