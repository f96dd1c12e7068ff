package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/internal/jobspec"
)

func newReportCmd(io IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Compare run reports: report diff",
		Long:  `report works on the report.json files that dedup and neardup-beam write.`,
	}
	cmd.AddCommand(newReportDiffCmd(io))
	// The root applies these to its own children only.
	for _, c := range cmd.Commands() {
		c.SetUsageTemplate(c.UsageTemplate() + exitStatusHelp)
		c.Args = wrapArgs(c.Args)
	}
	return cmd
}

// ---- report diff ----

type reportDiffOptions struct {
	json bool
}

func (o *reportDiffOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.json, "json", false, "write the comparison as JSON")
}

func newReportDiffCmd(io IO) *cobra.Command {
	o := &reportDiffOptions{}
	cmd := &cobra.Command{
		Use:   "diff [flags] OLD NEW",
		Short: "Tell which distributions of two runs' reports moved, and by how much",
		Long: `diff compares two runs' report.json files (or the output directories that hold
them): each distribution both hold — drift's text length, features and
best-match similarity per document, the verified pairs' similarities and the
cluster sizes — by a two-sample Kolmogorov–Smirnov test on the histograms
(statistic D, p-value) and the population stability index (PSI); then the
headline counts and the configuration fields that differ.

A distribution is MOVED when the shift is both significant (p < 0.01) and
material (PSI >= 0.1): over millions of documents every difference is
significant however small, and over a few the PSI is noise. The p-value is
conservative: the histograms' bins can only hide a difference. Runs
configured differently (another spec, threshold or banding) may differ for
that reason; diff lists those fields. A report written before drift was
recorded lacks drift's distributions: they are listed as not in both.

The comparison goes to standard output; the exit status does not depend on
it.`,
		Example: `  neardup report diff runs/monday runs/tuesday
  neardup report diff --json old/report.json new/report.json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			old, err := readReportArg(args[0])
			if err != nil {
				return err
			}
			cur, err := readReportArg(args[1])
			if err != nil {
				return err
			}
			d, err := jobspec.DiffReports(old, cur)
			if err != nil {
				return err
			}
			if o.json {
				data, err := json.MarshalIndent(d, "", "  ")
				if err != nil {
					return err
				}
				_, err = io.Out.Write(append(data, '\n'))
				return err
			}
			_, err = fmt.Fprint(io.Out, d.String())
			return err
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// readReportArg reads the report at path, or path/report.json when path is
// a directory.
func readReportArg(path string) (*jobspec.Report, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, dedup.ReportFile)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return jobspec.ReadReport(f, path)
}
