package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/server"
)

type checkOptions struct {
	client   clientFlags
	corpus   corpusFlags
	batch    int
	noInsert bool
}

func (o *checkOptions) AddFlags(fs *pflag.FlagSet) {
	o.client.AddFlags(fs)
	o.corpus.AddFlags(fs)
	fs.IntVar(&o.batch, "batch", 100, "documents per request")
	fs.BoolVar(&o.noInsert, "no-insert", false, "only check (POST /v1/check); store nothing")
}

func newCheckCmd(stdio IO) *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [flags] INPUT...",
		Short: "Check documents against a running server, storing the new ones",
		Long: `check reads JSONL, Parquet or text corpora (gzip/zstd by extension, - for stdin)
and sends every document to a running neardup serve in batches
(POST /v1/documents:batch): each is answered "new" (and stored) or "duplicate"
with its matches. One JSON answer per document goes to standard output, in
input order; a summary to standard error. With --no-insert nothing is stored
(one POST /v1/check per document). Exit status 1 if any document failed.`,
		Example: `  neardup check --server http://127.0.0.1:8080 crawl-today.jsonl > verdicts.jsonl
  neardup check --no-insert --threshold 0.9 candidates.jsonl`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.batch < 1 {
				return usagef("--batch must be at least 1")
			}
			c, q, err := o.client.client()
			if err != nil {
				return err
			}
			copts, err := o.corpus.build(stdio)
			if err != nil {
				return err
			}
			return runCheck(cmd.Context(), stdio, o, c, q, &copts, args)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runCheck(ctx context.Context, stdio IO, o *checkOptions, c *server.Client, q server.Query, copts *corpus.Options, inputs []string) error {
	if copts.Stdin == nil {
		copts.Stdin = stdio.In
	}
	reader, err := corpus.NewReader(inputs, copts)
	if err != nil {
		return err
	}
	defer reader.Close()
	parser, err := corpus.NewParser(copts)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdio.Out)
	enc.SetEscapeHTML(false)
	var counts struct{ new, dup, failed int }
	var pending []server.Document
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		var results []server.CheckResult
		if o.noInsert {
			for _, d := range pending {
				r, err := c.Check(ctx, d, q)
				if err != nil {
					var ae *server.APIError
					if !errors.As(err, &ae) {
						return err
					}
					r = server.CheckResult{ID: d.ID, Status: server.StatusError, Duplicates: []server.Duplicate{}, Error: &server.ErrorBody{Code: ae.Code, Message: ae.Message}}
				}
				results = append(results, r)
			}
		} else {
			if results, err = c.Batch(ctx, pending, q); err != nil {
				return fmt.Errorf("batch to %s: %w", o.client.server, err)
			}
		}
		for _, r := range results {
			switch r.Status {
			case server.StatusNew:
				counts.new++
			case server.StatusDuplicate:
				counts.dup++
			default:
				counts.failed++
			}
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		pending = pending[:0]
		return nil
	}
	var batch corpus.Batch
	var doc corpus.Document
	for {
		err := reader.Next(&batch)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		for i := range batch.Records {
			if err := parser.Parse(&batch.Records[i], &doc); err != nil {
				if copts.SkipBad {
					counts.failed++
					continue
				}
				return err
			}
			pending = append(pending, server.Document{ID: string(doc.ID), Text: string(doc.Text)})
			if len(pending) == o.batch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdio.Err, "checked %d documents: %d new, %d duplicate, %d failed\n", counts.new+counts.dup+counts.failed, counts.new, counts.dup, counts.failed)
	if counts.failed > 0 {
		return fmt.Errorf("%d documents failed", counts.failed)
	}
	return nil
}
