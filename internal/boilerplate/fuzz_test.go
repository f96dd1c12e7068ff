package boilerplate

import (
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/shingle"
)

// FuzzReadLines: ReadLines never panics, and what it accepts writes back to
// a file that reads to the same set.
func FuzzReadLines(f *testing.F) {
	head := "# neardup boilerplate v1 spec=" + shingle.Prose.String()
	f.Add(head + " min_docs=3 lines=2 documents=9\n00000000000000ff\t9\tHome | News\n0000000000000001\t3\t\"a\\tb\"\n")
	f.Add(head + "\n")
	f.Add("# neardup boilerplate v1 spec=x\n")
	f.Add(head + " lines=1\n0123456789abcdef\t1\t#x\n")
	f.Add(head + "\n0123456789abcdef\t1\tx\n0123456789abcdef\t2\ty\n")
	f.Fuzz(func(t *testing.T, data string) {
		res, err := ReadLines(strings.NewReader(data), "fuzz", shingle.Prose)
		if err != nil {
			return
		}
		var b strings.Builder
		if err := WriteLines(&b, shingle.Prose, res); err != nil {
			t.Fatal(err)
		}
		back, err := ReadLines(strings.NewReader(b.String()), "again", shingle.Prose)
		if err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		if !slices.Equal(back.Set.Lines(), res.Set.Lines()) {
			t.Fatalf("sets differ")
		}
	})
}
