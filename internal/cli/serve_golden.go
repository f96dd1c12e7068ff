package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/server"
)

// goldenFlags are serve's golden-set monitoring flags.
type goldenFlags struct {
	truth    string
	corpus   string
	interval time.Duration
}

func (f *goldenFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.truth, "golden", "", "golden truth pairs (any pair file eval score reads): check --golden-corpus against the index at start and every --golden-interval, read-only, and export recall and precision")
	fs.StringVar(&f.corpus, "golden-corpus", "", "the golden documents (JSONL with id and text, Parquet or text), which must be in the index (with --golden)")
	fs.DurationVar(&f.interval, "golden-interval", server.DefaultGoldenInterval, "time between golden runs (with --golden)")
}

// validate checks that the flags go together.
func (f *goldenFlags) validate(fs *pflag.FlagSet) error {
	switch {
	case (f.truth == "") != (f.corpus == ""):
		return usagef("--golden and --golden-corpus go together")
	case f.truth == "" && fs.Changed("golden-interval"):
		return usagef("--golden-interval needs --golden and --golden-corpus")
	case f.truth != "" && f.interval < time.Second:
		return usagef("--golden-interval %v; must be at least 1s", f.interval)
	}
	return nil
}

// load reads the golden set into so, if the flags ask for one.
func (f *goldenFlags) load(ctx context.Context, so *server.Options) error {
	if f.truth == "" {
		return nil
	}
	set, err := loadGoldenSet(ctx, f.truth, f.corpus)
	if err != nil {
		return usageError{fmt.Errorf("golden set: %w", err)}
	}
	so.Golden, so.GoldenInterval = set, f.interval
	return nil
}

// loadGoldenSet reads the golden truth (any pair file eval score reads) and
// the golden corpus (read as neardup check reads its inputs, with the default
// corpus options: JSONL with "id" and "text", Parquet, or text by extension).
func loadGoldenSet(ctx context.Context, truthPath, corpusPath string) (*server.GoldenSet, error) {
	pf, err := readPairFile(truthPath)
	if err != nil {
		return nil, err
	}
	copts := corpus.Options{}
	reader, err := corpus.NewReader([]string{corpusPath}, &copts)
	if err != nil {
		return nil, err
	}
	defer reader.Close()
	parser, err := corpus.NewParser(&copts)
	if err != nil {
		return nil, err
	}
	set := &server.GoldenSet{Truth: pf.Pairs, TruthThreshold: pf.Threshold}
	var batch corpus.Batch
	var doc corpus.Document
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		err := reader.Next(&batch)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for i := range batch.Records {
			if err := parser.Parse(&batch.Records[i], &doc); err != nil {
				return nil, err
			}
			set.Docs = append(set.Docs, server.GoldenDoc{ID: string(doc.ID), Text: string(doc.Text)})
		}
	}
	if len(set.Docs) == 0 {
		return nil, fmt.Errorf("golden corpus %s holds no document", corpusPath)
	}
	return set, nil
}

// goldenDocs returns the golden documents so holds, if any.
func goldenDocs(so *server.Options) []server.GoldenDoc {
	if so.Golden == nil {
		return nil
	}
	return so.Golden.Docs
}
