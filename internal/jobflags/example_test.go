package jobflags_test

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/neardup/neardup/internal/jobflags"
)

func Example() {
	for _, args := range [][]string{
		{"-o", "out", "--threshold", "0.9", "--memory", "256MiB"},
		{"-o", "out", "--threshold", "0"},
		{"-o", "out", "--memory", "1e30GiB"},
	} {
		var f jobflags.Dedup
		fs := pflag.NewFlagSet("dedup", pflag.ContinueOnError)
		f.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			panic(err)
		}
		opts, err := f.Options(nil)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println("threshold", opts.Threshold, "memory", opts.Memory)
	}
	// Output:
	// threshold 0.9 memory 268435456
	// error: --threshold 0: jobspec: invalid options: threshold 0; want 0 < t < 1 (J = 1 is exact duplicates, which no banding targets; J = 0 makes every pair a duplicate)
	// error: --memory 1e30GiB: bytesize: invalid size: "1e30GiB" is 2^63 bytes or more; want less than 8 EiB
}
