package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/bytesize"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/lsh"
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
	simhash     planSimHashFlags
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
	fs.IntVar(&o.keyBits, "key-bits", plan.DefaultKeyBits, "bits of a bucket key: dedup, neardup-beam and the index (32: the batch drivers before 0.12)")
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
	o.simhash.AddFlags(fs)
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
--sample-floor, random pairs give the rest, scaled from the sample to N.

With --sketch simhash it chooses SimHash's Hamming distance k and blocks B from
--sample (required): the share of the sample's pairs at J ≥ --threshold within
each k (recall, against --recall, default 0.95), the candidates per document,
and the layout of least cost, beside the unit-weight model.`,
		Example: `  neardup plan --documents 300e6 --features 1000 --threshold 0.85 --recall 0.95 --memory 100GB --docs-per-second 5000
  neardup plan --sample sample.jsonl --documents 50e6 --threshold 0.8 --memory 16GB
  neardup plan --sketch simhash --sample sample.jsonl --documents 1e9 --threshold 0.95`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch o.simhash.sketch {
			case "minhash":
				for _, name := range []string{"weight", "hamming", "blocks"} {
					if cmd.Flags().Changed(name) {
						return usagef("--%s: a simhash flag; add --sketch simhash", name)
					}
				}
			case "simhash":
				return runPlanSimHash(cmd, io, o)
			default:
				return usagef("--sketch %s: want minhash or simhash", o.simhash.sketch)
			}
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

// Limits of plan's numeric flags that plan.Input does not state.
const (
	// maxSampleDraws bounds --sample-draws: each draw is one Jaccard
	// similarity of two sample documents; a billion take minutes.
	maxSampleDraws = 1_000_000_000
)

// checkFlags checks every numeric flag against its range before anything is
// read: plan.Input reads zeros as "default", so a 0 given on the command
// line (where the flags' defaults are not 0) is refused here, as is any
// value that would overflow on the way into plan.Input.
func (o *planOptions) checkFlags() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	whole := func(x float64) bool { return finite(x) && x == math.Trunc(x) }
	withSample := o.sample != ""
	for _, c := range []struct {
		name  string
		value any
		ok    bool
		want  string
	}{
		{"documents", o.documents, o.documents == 0 && withSample || whole(o.documents) && o.documents >= 2 && o.documents <= plan.MaxDocuments,
			"a whole number from 2 to 2^53 (with --sample, 0 for the sample's size)"},
		{"features", o.features, o.features == 0 && withSample || o.features >= 1 && o.features <= plan.MaxFeatures,
			"1 to 2^30 distinct features per document (with --sample, 0 for the sample's mean)"},
		{"doc-bytes", o.docBytes, o.docBytes == 0 || o.docBytes >= 1 && o.docBytes <= plan.MaxFeatures,
			"1 to 2^30 bytes, or 0 for the sample's mean or 6 bytes per feature"},
		{"threshold", o.threshold, o.threshold > 0 && o.threshold < 1, "0 < t < 1"},
		{"recall", o.recall, o.recall > 0 && o.recall <= 1, "0 < recall <= 1"},
		{"precision", o.precision, o.precision != 0 && o.precision <= 1 && finite(o.precision),
			"a share up to 1, or a negative number for no target (0 is neither)"},
		{"fp-weight", o.fpWeight, o.fpWeight >= 0 && finite(o.fpWeight), "a finite weight, at least 0"},
		{"fn-weight", o.fnWeight, o.fnWeight >= 0 && finite(o.fnWeight), "a finite weight, at least 0"},
		{"docs-per-second", o.rate, o.rate >= 0 && finite(o.rate), "a finite rate, at least 0 (0: no throughput lines)"},
		{"background", o.background, o.background > 0 && o.background < o.threshold,
			"0 < background < threshold (a tiny value such as 1e-6 stands for none)"},
		{"duplicates", o.duplicates, o.duplicates > 0 && finite(o.duplicates) && (o.documents == 0 || o.duplicates <= o.documents-1),
			"more than 0 and at most documents - 1 partners per document"},
		{"key-bits", o.keyBits, o.keyBits >= 16 && o.keyBits <= 64, "16 to 64"},
		{"num-perm", o.k, o.k >= 0 && o.k <= lsh.MaxSlots, fmt.Sprintf("1 to %d, or 0 to choose", lsh.MaxSlots)},
		{"bits", o.bits, o.bits == 0 || slices.Contains(plan.SlotWidths, o.bits), "1, 2, 4, 8, 16, 32 or 64, or 0 to choose"},
		{"sample-floor", o.sampleFloor, !withSample || o.sampleFloor > 0 && o.sampleFloor <= o.threshold, "0 < floor <= threshold"},
		{"sample-draws", o.sampleDraws, o.sampleDraws >= 1 && o.sampleDraws <= maxSampleDraws, "1 to 1,000,000,000"},
		{"workers", o.workers, jobspec.CheckWorkers(o.workers) == nil, fmt.Sprintf("0 (all cores) to %d", jobspec.MaxWorkers)},
	} {
		if !c.ok {
			return usagef("--%s %v: want %s", c.name, c.value, c.want)
		}
	}
	if withSample {
		if _, err := os.Stat(o.sample); err != nil {
			return usagef("--sample %s: %w", o.sample, err)
		}
	}
	return nil
}

func (o *planOptions) input(cmd *cobra.Command) (plan.Input, error) {
	if o.sample == "" && (o.documents == 0 || o.features == 0) {
		return plan.Input{}, usagef("--documents and --features are required without --sample")
	}
	if err := o.checkFlags(); err != nil {
		return plan.Input{}, err
	}
	scheme, err := minhash.ParseScheme(o.scheme)
	if err != nil {
		return plan.Input{}, usageError{fmt.Errorf("--scheme %s: %w", o.scheme, err)}
	}
	in := plan.Input{Documents: int64(o.documents), MeanFeatures: o.features, DocBytes: o.docBytes, Threshold: o.threshold,
		Recall: o.recall, Precision: o.precision, FPWeight: o.fpWeight, FNWeight: o.fnWeight, DocsPerSecond: o.rate,
		Background: o.background, Duplicates: o.duplicates, KeyBits: o.keyBits, K: o.k, Bits: o.bits, Scheme: scheme}
	if o.memory != "" {
		if in.Memory, err = bytesize.Parse(o.memory); err != nil {
			return in, usageError{fmt.Errorf("--memory %s: %w", o.memory, err)}
		}
		if in.Memory == 0 {
			return in, usagef("--memory %s: want a positive size (leave it out for no budget)", o.memory)
		}
	}
	if o.sample != "" {
		spec, err := shingle.Parse(o.shingle)
		if err != nil {
			return in, usageError{fmt.Errorf("--shingle %s: %w", o.shingle, err)}
		}
		copts, err := o.corpus.build(IO{}) // a sample is a file, never standard input
		if err != nil {
			return in, err
		}
		fc, err := loadFeatures(cmd.Context(), []string{o.sample}, copts, spec, o.workers)
		if err != nil {
			return in, err
		}
		in.Sample, err = plan.MeasureSample(fc.sets, fc.bytes, o.sampleFloor, o.sampleDraws, 1, &eval.Options{Workers: o.workers})
		if err != nil {
			return in, err
		}
	}
	in = in.EnsureDefaults()
	if err := in.Validate(); err != nil {
		return in, usageError{err}
	}
	return in, nil
}
