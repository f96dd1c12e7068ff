package progress_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/neardup/neardup/internal/progress"
)

// clock matches the parts of a line that depend on the wall clock: the
// rates, the time left and the elapsed seconds.
var clock = regexp.MustCompile(` +[0-9.]+ [a-z]+/s( +[0-9.]+ MB/s)?| ETA \S+| [0-9.]+s$`)

// A Bar draws to any writer; here a buffer instead of a terminal. Each stage
// ends with a final line (a newline after the redraws, which start with a
// carriage return); this example prints each final line without its
// clock-dependent parts.
func Example() {
	var term bytes.Buffer
	bar := progress.New(&term)

	bar.Stage("read", -1, nil) // total unknown: no bar
	bar.Add(3, 600)
	bar.Stage("sign", 1000, nil) // ends "read"
	bar.Add(3, 300)
	bar.Add(2, 200)
	var consumed int64 = 4000
	bar.Stage("write", 4000, func() int64 { return consumed }) // progress from a reader
	bar.Add(5, 9000)
	bar.CountStage("verify", "pairs", 40) // counts pairs, no bytes
	bar.Add(10, 0)
	bar.Finish()

	for _, line := range strings.Split(strings.TrimSuffix(term.String(), "\n"), "\n") {
		frames := strings.Split(line, "\r")
		fmt.Printf("%q\n", clock.ReplaceAllString(frames[len(frames)-1], ""))
	}

	// A nil Bar is progress turned off: every method is a no-op.
	var off *progress.Bar
	off.Stage("sign", 1000, nil)
	off.Add(1, 100)
	off.Finish()
	// Output:
	// "read                3 docs"
	// "sign                5 docs [============            ]  50%"
	// "write               5 docs [========================] 100%"
	// "verify             10 pairs [======                  ]  25%"
}
