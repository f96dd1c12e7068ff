package job_test

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/neardup/neardup/beam/job"
)

// Deduplicate the bundled sample on the Prism runner, in-process, into
// single files (kept.jsonl, clusters.jsonl, pairs.tsv, report.json).
func Example() {
	out, err := os.MkdirTemp("", "neardup-beam-example-*")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(out)
	prismRun := func(ctx context.Context, p *beam.Pipeline) error {
		_, err := prism.Execute(ctx, p)
		return err
	}
	rep, err := job.Run(context.Background(), []string{"../../testdata/articles_1000.jsonl"}, out,
		&job.Options{SingleFile: true, Run: prismRun})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := rep.Counts
	fmt.Printf("documents %d, verified pairs %d, clusters %d, kept %d\n", c.Documents, c.VerifiedPairs, c.Clusters, c.Kept)
	// Output: documents 1000, verified pairs 10, clusters 10, kept 990
}
