package cli

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// planGolden is the data-driven golden file of `neardup plan` outputs: the
// seed's worked example (docs/plan.md) and its variants.
const planGolden = "../../testdata/golden/cli/plan.txt"

// goldenCase is one case of a data-driven golden file: comment lines, a
// command line (the arguments after "neardup", split on white space) and
// the expected output.
type goldenCase struct {
	comment []string
	cmd     string
	want    string
}

// The separators of a golden file, as in cockroachdb/datadriven's
// double-separator form (outputs may hold blank lines):
//
//	# comment
//	plan --documents 300e6 ...
//	----
//	----
//	output
//	----
//	----
const goldenSep = "----"

func parseGolden(t *testing.T, path string, data []byte) []goldenCase {
	t.Helper()
	lines := strings.Split(string(data), "\n")
	var cases []goldenCase
	var c goldenCase
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.TrimSpace(line) == "" && c.cmd == "":
			continue
		case strings.HasPrefix(line, "#") && c.cmd == "":
			c.comment = append(c.comment, line)
			continue
		case c.cmd == "":
			c.cmd = line
			if i+2 >= len(lines) || lines[i+1] != goldenSep || lines[i+2] != goldenSep {
				t.Fatalf("%s:%d: command %q not followed by %q twice", path, i+1, line, goldenSep)
			}
			i += 2
			var out []string
			for i++; ; i++ {
				if i+1 >= len(lines) {
					t.Fatalf("%s: output of %q not closed by %q twice", path, c.cmd, goldenSep)
				}
				if lines[i] == goldenSep && lines[i+1] == goldenSep {
					i++
					break
				}
				out = append(out, lines[i])
			}
			c.want = strings.Join(out, "\n") + "\n"
			cases = append(cases, c)
			c = goldenCase{}
		}
	}
	return cases
}

func formatGolden(cases []goldenCase) []byte {
	var b bytes.Buffer
	for i, c := range cases {
		if i > 0 {
			b.WriteString("\n")
		}
		for _, l := range c.comment {
			b.WriteString(l + "\n")
		}
		fmt.Fprintf(&b, "%s\n%s\n%s\n%s%s\n%s\n", c.cmd, goldenSep, goldenSep, c.want, goldenSep, goldenSep)
	}
	return b.Bytes()
}

// TestPlanGolden runs every command of testdata/golden/cli/plan.txt and
// compares its output (stdout; on failure "exit N" and stderr) with the
// file's. go test -run TestPlanGolden -update rewrites the outputs.
func TestPlanGolden(t *testing.T) { runGoldenFile(t, planGolden) }

// TestPlanSimHashGolden is TestPlanGolden for plan --sketch simhash
// (testdata/golden/cli/plan_simhash.txt).
func TestPlanSimHashGolden(t *testing.T) {
	runGoldenFile(t, "../../testdata/golden/cli/plan_simhash.txt")
}

// runGoldenFile runs the commands of a golden file and compares their
// outputs with the file's, or rewrites them under -update.
func runGoldenFile(t *testing.T, planGolden string) {
	data, err := os.ReadFile(planGolden)
	if err != nil {
		t.Fatal(err)
	}
	cases := parseGolden(t, planGolden, data)
	if len(cases) == 0 {
		t.Fatalf("%s holds no cases", planGolden)
	}
	for i, c := range cases {
		code, stdout, stderr := runCLI(t, "", strings.Fields(c.cmd)...)
		got := stdout
		if code != ExitOK {
			got = fmt.Sprintf("exit %d\n%s", code, stderr)
		}
		if !strings.HasSuffix(got, "\n") {
			got += "\n"
		}
		if *update {
			cases[i].want = got
			continue
		}
		if got != c.want {
			t.Errorf("neardup %s:\ngot:\n%s\nwant (%s):\n%s", c.cmd, got, planGolden, c.want)
		}
	}
	if *update {
		if err := os.WriteFile(planGolden, formatGolden(cases), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
