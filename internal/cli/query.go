package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/server"
)

// clientFlags name a running server.
type clientFlags struct {
	server    string
	tokenFile string
	threshold float64
	limit     int
}

func (f *clientFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.server, "server", "http://127.0.0.1:8080", "URL of a running neardup serve")
	fs.StringVar(&f.tokenFile, "token-file", "", "bearer token file (first token; default: $NEARDUP_TOKEN)")
	fs.Float64Var(&f.threshold, "threshold", 0, "least similarity of a match (default: the server's)")
	fs.IntVar(&f.limit, "limit", 0, "most matches per document (default: the server's, 10)")
}

func (f *clientFlags) client() (*server.Client, server.Query, error) {
	token := os.Getenv("NEARDUP_TOKEN")
	if f.tokenFile != "" {
		tokens, err := readTokens(f.tokenFile)
		if err != nil {
			return nil, server.Query{}, usageError{err}
		}
		token = tokens[0]
	}
	if f.threshold < 0 || f.threshold > 1 || f.limit < 0 {
		return nil, server.Query{}, usagef("--threshold must be in (0, 1] and --limit positive")
	}
	return server.NewClient(f.server, token, nil), server.Query{Threshold: f.threshold, Limit: f.limit}, nil
}

type queryOptions struct {
	client clientFlags
	id     string
	file   string
	get    string
}

func newQueryCmd(stdio IO) *cobra.Command {
	o := &queryOptions{}
	cmd := &cobra.Command{
		Use:   "query [flags] [TEXT]",
		Short: "Ask a running server for the near duplicates of a text (nothing is stored)",
		Long: `query sends one text (the argument, --file, or standard input) to a running
neardup serve (POST /v1/check) and prints its answer as JSON: "new", or
"duplicate" with the stored documents it matches, best first. Nothing is
stored. With --get ID it prints a stored document's id and metadata instead.`,
		Example: `  neardup query "the quick brown fox jumps over the lazy dog"
  neardup query --file page.txt --threshold 0.9 --server http://10.0.0.5:8080
  neardup query --get doc-42`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, q, err := o.client.client()
			if err != nil {
				return err
			}
			return runQuery(cmd.Context(), stdio, o, c, q, args)
		},
	}
	fs := cmd.Flags()
	o.client.AddFlags(fs)
	fs.StringVar(&o.id, "id", "", "the document's id, if it is stored (never matched against itself)")
	fs.StringVar(&o.file, "file", "", "read the text from this file")
	fs.StringVar(&o.get, "get", "", "print the stored document with this id instead")
	return cmd
}

func runQuery(ctx context.Context, stdio IO, o *queryOptions, c *server.Client, q server.Query, args []string) error {
	enc := json.NewEncoder(stdio.Out)
	enc.SetEscapeHTML(false)
	if o.get != "" {
		d, err := c.Get(ctx, o.get)
		if err != nil {
			return err
		}
		return enc.Encode(d)
	}
	var text string
	switch {
	case len(args) == 1 && o.file != "":
		return usagef("give the text as an argument or --file, not both")
	case len(args) == 1:
		text = args[0]
	case o.file != "":
		b, err := os.ReadFile(o.file)
		if err != nil {
			return err
		}
		text = string(b)
	default:
		b, err := io.ReadAll(stdio.In)
		if err != nil {
			return err
		}
		text = string(b)
	}
	if strings.TrimSpace(text) == "" {
		return usagef("no text to query")
	}
	res, err := c.Check(ctx, server.Document{ID: o.id, Text: text}, q)
	if err != nil {
		return fmt.Errorf("query %s: %w", o.client.server, err)
	}
	return enc.Encode(res)
}
