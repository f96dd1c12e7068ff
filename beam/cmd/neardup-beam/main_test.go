package main

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/neardup/neardup/beam/internal/tmpdir"
	"github.com/neardup/neardup/dedup"
)

func TestMain(m *testing.M) {
	beamlog.LogLevel = "warn"
	beam.Init()
	cleanup, err := tmpdir.Private("neardup-beam-test-") // Beam's leftovers go with it
	if err != nil {
		panic(err)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

const sample = "../../../testdata/articles_1000.jsonl"

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestFlagsMatchNeardup checks that neardup-beam takes every flag of
// neardup dedup with the same name, shorthand and (literal) default. It reads
// them from the source of internal/cli, whose packages this module does not
// build (they would bring the service's dependencies into it).
func TestFlagsMatchNeardup(t *testing.T) {
	fset := token.NewFileSet()
	type want struct{ short, def string }
	wantFlags := map[string]want{}
	for _, name := range []string{"dedup.go", "flags.go"} {
		f, err := parser.ParseFile(fset, filepath.Join(cliDir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "AddFlags" || fn.Recv == nil {
				continue
			}
			recv := types(fn.Recv.List[0].Type)
			if recv != "dedupOptions" && recv != "sketchFlags" && recv != "corpusFlags" {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !strings.HasSuffix(sel.Sel.Name, "Var") && !strings.HasSuffix(sel.Sel.Name, "VarP") {
					return true
				}
				args := call.Args[1:] // after &o.field
				lit := func(e ast.Expr) string {
					if b, ok := e.(*ast.BasicLit); ok {
						if b.Kind == token.STRING {
							v, _ := strconv.Unquote(b.Value)
							return v
						}
						return b.Value
					}
					if id, ok := e.(*ast.Ident); ok && (id.Name == "true" || id.Name == "false") {
						return id.Name
					}
					return "?" // not a literal: not compared
				}
				w := want{}
				name := lit(args[0])
				if strings.HasSuffix(sel.Sel.Name, "VarP") {
					w.short, args = lit(args[1]), args[1:]
				}
				w.def = lit(args[1])
				wantFlags[name] = w
				return true
			})
		}
	}
	if len(wantFlags) < 20 {
		t.Fatalf("only %d flags found in %s", len(wantFlags), cliDir)
	}
	ours := newRoot(&bytes.Buffer{}, &bytes.Buffer{}).Flags()
	for name, w := range wantFlags {
		g := ours.Lookup(name)
		if g == nil {
			t.Errorf("--%s: missing", name)
			continue
		}
		if g.Shorthand != w.short || w.def != "?" && g.DefValue != w.def {
			t.Errorf("--%s: got -%s default %q; want -%s default %q", name, g.Shorthand, g.DefValue, w.short, w.def)
		}
	}
}

const cliDir = "../../../internal/cli"

// types names a receiver type (*T or T).
func types(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// TestSameOutputsAsNeardup runs both commands on the bundled sample.
func TestSameOutputsAsNeardup(t *testing.T) {
	want, got := t.TempDir(), t.TempDir()
	rep, err := dedup.Run(context.Background(), []string{sample}, want, nil)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "--single-file", "-q", "-o", got, sample)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	c := rep.Counts
	summary := fmt.Sprintf("documents %d (empty %d, bad %d)  candidates %d  verified pairs %d  clusters %d  removed %d  kept %d  in ",
		c.Documents, c.Empty, c.Bad, c.Candidates, c.VerifiedPairs, c.Clusters, c.Removed, c.Kept)
	if !strings.HasPrefix(stdout, summary) {
		t.Errorf("summary %q; want %q…", stdout, summary)
	}
	for _, name := range []string{"pairs.tsv", "clusters.jsonl", "kept.jsonl"} {
		w, _ := os.ReadFile(filepath.Join(want, name))
		g, err := os.ReadFile(filepath.Join(got, name))
		if err != nil || !bytes.Equal(w, g) {
			t.Errorf("%s differs from neardup dedup's (%v)", name, err)
		}
	}
}

func TestExitCodes(t *testing.T) {
	out := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-o", out}, exitUsage, "requires at least 1 arg"},
		{[]string{sample}, exitUsage, "--out is required"},
		{[]string{"--verify", "maybe", "-o", out, sample}, exitUsage, "verify"},
		{[]string{"--no-such-flag", "-o", out, sample}, exitUsage, "unknown flag"},
		{[]string{"-o", out, "-"}, exitFailure, "standard input"},
		{[]string{"-o", out, filepath.Join(out, "missing.jsonl")}, exitFailure, "missing.jsonl"},
		{[]string{"-o", out, filepath.Join(out, "*.jsonl")}, exitFailure, "matches no file"},
		{[]string{"--async", "-o", out, sample}, exitUsage, "--async"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, %q; want exit %d mentioning %q", c.args, code, stderr, c.code, c.msg)
		}
	}
}

func TestHelp(t *testing.T) {
	code, stdout, _ := runCLI(t, "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--threshold", "--single-file", "Beam runner flags", "--environment_type", "EXIT STATUS"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	if strings.Contains(stdout, "control_endpoint") {
		t.Errorf("help lists worker-only flags")
	}
}

func TestWorkerMode(t *testing.T) {
	for args, want := range map[string]bool{"--worker": true, "-worker=true": true, "--worker=false": false, "--workers=2": false, "worker": false} {
		if got := workerMode(strings.Fields(args)); got != want {
			t.Errorf("workerMode(%q) = %v; want %v", args, got, want)
		}
	}
}
