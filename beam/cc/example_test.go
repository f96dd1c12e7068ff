package cc_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/neardup/neardup/beam/cc"
)

func labelLine(node, label uint64) string { return fmt.Sprintf("%d %d", label, node) }

func init() { register.Function2x1(labelLine) }

// The whole loop on Prism: a first job of k rounds from the input edges
// (Step, WriteStep), more jobs until the fixed point (Converge), and a last
// one that labels every node with the lowest node of its component (Labels).
func Example() {
	ctx := context.Background()
	run := func(ctx context.Context, p *beam.Pipeline) error {
		_, err := prism.Execute(ctx, p)
		return err
	}
	dir, err := os.MkdirTemp("", "cc-example-*")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	// A path 1-2-3-4-5, a star around 11, and one more edge.
	edges := []cc.Edge{{1, 2}, {3, 2}, {3, 4}, {5, 4}, {11, 10}, {11, 12}, {13, 11}, {21, 20}}
	const k = 1
	p, s := beam.NewPipelineWithRoot()
	out, unsettled := cc.Step(s, cc.ToKV(s, beam.CreateList(s, edges)), k)
	cc.WriteStep(s, dir, "cc", out, unsettled)
	if err := run(ctx, p); err != nil {
		panic(err)
	}
	final, more, err := cc.Converge(ctx, run, dir, "cc", k, 0)
	if err != nil {
		panic(err)
	}

	p, s = beam.NewPipelineWithRoot()
	st, err := cc.Read(ctx, s, dir, final)
	if err != nil {
		panic(err)
	}
	labels := filepath.Join(dir, "labels.txt")
	textio.Write(s, labels, beam.ParDo(s, labelLine, cc.Labels(s, st)))
	if err := run(ctx, p); err != nil {
		panic(err)
	}

	data, err := os.ReadFile(labels)
	if err != nil {
		panic(err)
	}
	components := map[uint64][]uint64{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var label, node uint64
		if _, err := fmt.Sscan(line, &label, &node); err != nil {
			panic(err)
		}
		components[label] = append(components[label], node)
	}
	for _, label := range slices.Sorted(maps.Keys(components)) {
		slices.Sort(components[label])
		fmt.Println("component", label, components[label])
	}
	fmt.Println("rounds:", k+more)
	// Output:
	// component 1 [1 2 3 4 5]
	// component 10 [10 11 12 13]
	// component 20 [20 21]
	// rounds: 3
}
