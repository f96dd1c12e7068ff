package jobflags

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/neardup/neardup/internal/jobspec"
)

// parse registers the dedup flags, parses args and returns the options or
// the error.
func parse(t *testing.T, args ...string) (*jobspec.Options, error) {
	t.Helper()
	var f Dedup
	fs := pflag.NewFlagSet("dedup", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse(append([]string{"-o", "out"}, args...)); err != nil {
		return nil, err
	}
	return f.Options(nil)
}

// TestDefaults: no flags give the defaults of jobspec.Options.
func TestDefaults(t *testing.T) {
	got, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	want := (&jobspec.Options{}).EnsureDefaults()
	want.Corpus.Format, want.Corpus.IDField, want.Corpus.TextField, want.Corpus.MaxRecordBytes = "auto", "id", "text", 64<<20
	if !reflect.DeepEqual(got, want) {
		t.Errorf("flag defaults\n got %+v\nwant %+v", got, want)
	}
}

// TestEveryFlagRange: every value of every flag outside its range is
// refused with an error that names the flag and the range; values at the
// edges of the ranges are accepted. The values that jobspec.Options would
// read as "default" (0) are among the refused.
func TestEveryFlagRange(t *testing.T) {
	for _, c := range []struct {
		flag string
		bad  []string
		good []string
		want string // in the error; alternatives separated by "|"
	}{
		{"threshold", []string{"0", "1", "-0.5", "1.5", "NaN", "+Inf"}, []string{"0.05", "0.99"}, "want 0 < t < 1"},
		{"recall", []string{"0", "1", "-1", "2", "NaN"}, []string{"0.5", "0.999"}, "want 0 < recall < 1"},
		{"bucket-cap", []string{"0", "1", "-5", "65537"}, []string{"2", "65536"}, "want 2 to 65536"},
		{"workers", []string{"-1", "1025", "-99999"}, []string{"0", "1", "1024"}, "want 0 (all cores) to 1024"},
		{"memory", []string{"0", "15MiB", "1e30GiB", "-1GiB", "lots", "NaN", "9.3e18"}, []string{"16MiB", "1TiB"}, "--memory"},
		{"bands", []string{"-1", "4"}, []string{}, "--bands"},
		{"rows", []string{"-1", "4"}, []string{}, "--bands"},
		{"multi-probe", []string{"-1", "3"}, []string{"1", "2"}, "--multi-probe"},
		{"verify", []string{"maybe", ""}, []string{"estimate", "none"}, "want exact, estimate or none"},
		{"cluster", []string{"stars", ""}, []string{"star"}, "want components or star"},
		{"keep", []string{"last", "field:"}, []string{"longest", "field:score"}, "--keep"},
		{"num-perm", []string{"0", "-1", "1000000"}, []string{"16", "4096"}, "--num-perm"},
		{"bits", []string{"0", "3", "-8", "128"}, []string{"1", "64"}, "--bits"},
		{"shingle", []string{"", "word:0", "nonsense"}, []string{"char:5", "code"}, "--shingle"},
		{"scheme", []string{"", "minwise"}, []string{"khash"}, "--scheme"},
		{"format", []string{"xml", "json"}, []string{"lines", "parquet", ""}, "--format"},
		{"id-field", []string{"", "text"}, []string{"url"}, "--id-field|IDField"},
		{"text-field", []string{"", "id"}, []string{"body"}, "--text-field|TextField"},
		{"max-record-bytes", []string{"0", "-1", "2000000000"}, []string{"1", "1073741824"}, "--max-record-bytes"},
	} {
		for _, v := range c.bad {
			_, err := parse(t, "--"+c.flag+"="+v)
			if err == nil {
				t.Errorf("--%s %q: accepted; want an error", c.flag, v)
				continue
			}
			msg := err.Error()
			found := false
			for _, w := range strings.Split(c.want, "|") {
				found = found || strings.Contains(msg, w)
			}
			if !found || !strings.Contains(msg, "--"+c.flag) {
				t.Errorf("--%s %q: error %q does not name the flag and say %q", c.flag, v, msg, c.want)
			}
		}
		for _, v := range c.good {
			if _, err := parse(t, "--"+c.flag+"="+v); err != nil {
				t.Errorf("--%s %q: %v; want accepted", c.flag, v, err)
			}
		}
	}
}

// TestPaths: what can be told of the paths before a run is refused: a
// missing or non-directory --tmp-dir, a missing or directory --golden, an
// --out that is a file.
func TestPaths(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, []byte("a\tb\n"), 0o644)
	missing := filepath.Join(dir, "missing")
	for _, c := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"--tmp-dir", dir}, true},
		{[]string{"--tmp-dir", missing}, false},
		{[]string{"--tmp-dir", file}, false},
		{[]string{"--tmp-dir", "gs://bucket/tmp"}, true},
		{[]string{"--golden", file}, true},
		{[]string{"--golden", missing}, false},
		{[]string{"--golden", dir}, false},
		{[]string{"-o", file}, false},
		{[]string{"-o", missing}, true},
		{[]string{"-o", dir}, true},
	} {
		_, err := parse(t, c.args...)
		if c.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), c.args[0]) {
			t.Errorf("%v: err = %v; want ok %v and the flag named", c.args, err, c.ok)
		}
	}
}

// TestCombinations: rules between flags.
func TestCombinations(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bands", "4"}, "--bands and --rows go together"},
		{[]string{"--rows", "4"}, "--bands and --rows go together"},
		{[]string{"--bands", "40", "--rows", "4"}, "160 slots"},
		{[]string{"--bands", "4", "--rows", "2", "--multi-probe", "2"}, "Probe must be less than Rows"},
		{[]string{"--num-perm", "1", "--recall", "0.999999"}, "choosing bands"},
		{[]string{"--keep", "field:id"}, "KeepField"},
	} {
		_, err := parse(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v; want it to say %q", c.args, err, c.want)
		}
	}
	if _, err := (&Dedup{}).Options(nil); err == nil || !strings.Contains(err.Error(), "--out is required") {
		t.Errorf("no --out: err = %v", err)
	}
	o, err := parse(t, "--multi-probe", "1")
	if err != nil || o.Bands.Probe != 1 || o.Bands.Bands == 0 {
		t.Errorf("--multi-probe 1 alone: %v, %v; want the chosen bands with probe 1", o.Bands, err)
	}
}
