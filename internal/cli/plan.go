package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/plan"
	"github.com/neardup/neardup/shingle"
)

type planOptions struct {
	documents   float64
	features    float64
	docBytes    float64
	threshold   float64
	recall      float64
	precision   float64
	fpWeight    float64
	fnWeight    float64
	memory      string
	rate        float64
	background  float64
	duplicates  float64
	keyBits     int
	k           int
	bits        int
	scheme      string
	sample      string
	sampleFloor float64
	sampleDraws int
	shingle     string
	workers     int
	json        bool
	corpus      corpusFlags
}

func (o *planOptions) AddFlags(fs *pflag.FlagSet) {
	fs.Float64Var(&o.documents, "documents", 0, "number of documents N, e.g. 300e6 (default with --sample: the sample's)")
	fs.Float64Var(&o.features, "features", 0, "mean distinct features (shingles) per document (default with --sample: measured)")
	fs.Float64Var(&o.docBytes, "doc-bytes", 0, "mean text bytes per document, for throughput (default: measured, else 6 per feature)")
	fs.Float64Var(&o.threshold, "threshold", plan.DefaultThreshold, "Jaccard similarity of near duplicates")
	fs.Float64Var(&o.recall, "recall", plan.DefaultRecall, "least probability that a pair at the threshold becomes a candidate")
	fs.Float64Var(&o.precision, "precision", plan.DefaultPrecision, "least share of true pairs among candidates, before verification (negative: no target)")
	fs.Float64Var(&o.fpWeight, "fp-weight", 0, "choose each k's banding by fp-weight·FP area + fn-weight·FN area (with --fn-weight)")
	fs.Float64Var(&o.fnWeight, "fn-weight", 0, "weight of the false-negative area (see --fp-weight)")
	fs.StringVar(&o.memory, "memory", "", "budget for signatures and band index, e.g. 100GB (default: none)")
	fs.Float64Var(&o.rate, "docs-per-second", 0, "ingestion rate to sustain, for the throughput lines")
	fs.Float64Var(&o.background, "background", plan.DefaultBackground, "without --sample: Jaccard similarity assumed for unrelated pairs")
	fs.Float64Var(&o.duplicates, "duplicates", plan.DefaultDuplicates, "without --sample: near-duplicate partners per document")
	fs.IntVar(&o.keyBits, "key-bits", plan.DefaultKeyBits, "bits of a band key in the index")
	fs.IntVar(&o.k, "num-perm", 0, "fix k, the signature slots (default: chosen)")
	fs.IntVar(&o.bits, "bits", 0, "fix the bits per slot: 64, 32, 16, 8, 4, 2 or 1 (default: chosen)")
	fs.StringVar(&o.scheme, "scheme", "oph", "signature scheme: oph or khash")
	fs.StringVar(&o.sample, "sample", "", "a sample of the corpus (as for dedup): measure the similarity distribution instead of assuming it")
	fs.Float64Var(&o.sampleFloor, "sample-floor", plan.DefaultFloor, "with --sample: list pairs at or above this similarity exactly")
	fs.IntVar(&o.sampleDraws, "sample-draws", 200000, "with --sample: random pairs drawn for the similarities below the floor")
	fs.StringVar(&o.shingle, "shingle", "prose", "with --sample: shingling spec, as for dedup")
	fs.IntVar(&o.workers, "workers", 0, "with --sample: worker goroutines (default: all cores)")
	fs.BoolVar(&o.json, "json", false, "print the plan as JSON")
	o.corpus.AddFlags(fs)
}

func newPlanCmd(io IO) *cobra.Command {
	o := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan [flags]",
		Short: "Choose k, slot width and bands from recall and precision targets and a memory budget",
		Long: `plan chooses the parameters of a deduplication from targets: the number of slots
k, the slot width, the bands (b, r), and shows what they cost and catch — the
S-curve with the threshold marked, expected recall, candidates per document and
precision before verification, memory of signatures and band index, and
throughput — with the arithmetic. Among all configurations that reach --recall
at the threshold and --precision, and fit --memory, it takes the one with the
least memory per document.

Without --sample it assumes the similarity distribution: --duplicates partners
per document spread over [threshold, 1], every other pair at --background. With
--sample FILE it measures it: the exact join lists every sample pair above
--sample-floor, random pairs give the rest, scaled from the sample to N.`,
		Example: `  neardup plan --documents 300e6 --features 1000 --threshold 0.85 --recall 0.95 --memory 100GB --docs-per-second 5000
  neardup plan --sample sample.jsonl --documents 50e6 --threshold 0.8 --memory 16GB`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := o.input(cmd)
			if err != nil {
				return err
			}
			p, err := plan.Make(in)
			if err != nil {
				return err
			}
			if o.json {
				enc := json.NewEncoder(io.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(p)
			}
			_, err = fmt.Fprint(io.Out, p.String())
			return err
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func (o *planOptions) input(cmd *cobra.Command) (plan.Input, error) {
	scheme, err := minhash.ParseScheme(o.scheme)
	if err != nil {
		return plan.Input{}, usageError{err}
	}
	in := plan.Input{Documents: int64(o.documents), MeanFeatures: o.features, DocBytes: o.docBytes, Threshold: o.threshold,
		Recall: o.recall, Precision: o.precision, FPWeight: o.fpWeight, FNWeight: o.fnWeight, DocsPerSecond: o.rate,
		Background: o.background, Duplicates: o.duplicates, KeyBits: o.keyBits, K: o.k, Bits: o.bits, Scheme: scheme}
	if o.memory != "" {
		if in.Memory, err = dedup.ParseBytes(o.memory); err != nil {
			return in, usageError{err}
		}
	}
	if o.sample != "" {
		spec, err := shingle.Parse(o.shingle)
		if err != nil {
			return in, usageError{err}
		}
		copts, err := o.corpus.build(IO{}) // a sample is a file, never standard input
		if err != nil {
			return in, err
		}
		if !(o.sampleFloor > 0 && o.sampleFloor <= o.threshold) {
			return in, usagef("--sample-floor %v; want 0 < floor <= threshold", o.sampleFloor)
		}
		fc, err := loadFeatures(cmd.Context(), []string{o.sample}, copts, spec, o.workers)
		if err != nil {
			return in, err
		}
		in.Sample, err = plan.MeasureSample(fc.sets, fc.bytes, o.sampleFloor, o.sampleDraws, 1, &eval.Options{Workers: o.workers})
		if err != nil {
			return in, err
		}
	} else if o.documents == 0 || o.features == 0 {
		return in, usagef("--documents and --features are required without --sample")
	}
	in = in.EnsureDefaults()
	if err := in.Validate(); err != nil {
		return in, usageError{err}
	}
	return in, nil
}
