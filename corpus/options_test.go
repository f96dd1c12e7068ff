package corpus

import (
	"errors"
	"flag"
	"os"
	"reflect"
	"testing"

	"github.com/spf13/pflag"
)

var (
	_ flag.Value  = (*Format)(nil)
	_ pflag.Value = (*Format)(nil)
	_ error       = (*RecordError)(nil)
	_ Selection   = Indices(nil)
	_ Selection   = Bitset(nil)
)

func TestOptionsDefaults(t *testing.T) {
	var nilOpts *Options
	got := nilOpts.EnsureDefaults()
	want := &Options{Format: FormatAuto, IDField: "id", TextField: "text", MaxRecordBytes: 64 << 20, BatchBytes: 1 << 20, Stdin: os.Stdin}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("nil.EnsureDefaults(): got %+v; want %+v", got, want)
	}
	o := &Options{TextField: "body", MaxRecordBytes: 10}
	if o.EnsureDefaults() != o || o.TextField != "body" || o.MaxRecordBytes != 10 || o.IDField != "id" {
		t.Errorf("EnsureDefaults changed set fields or did not return its receiver: %+v", o)
	}
	if err := nilOpts.Validate(); err != nil {
		t.Errorf("nil.Validate(): %v", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		frag string // "" means valid
	}{
		{"zero", Options{}, ""},
		{"all set", Options{Format: FormatParquet, IDField: "k", TextField: "v", KeepField: "q", MaxRecordBytes: 1, BatchBytes: 1, SkipBad: true}, ""},
		{"format", Options{Format: "csv"}, "Format"},
		{"same id and text", Options{IDField: "text"}, "IDField and TextField"},
		{"keep is text", Options{KeepField: "text"}, "KeepField"},
		{"keep is id", Options{KeepField: "id"}, "KeepField"},
		{"bad utf8 field", Options{TextField: "t\xff"}, "TextField"},
		{"negative max", Options{MaxRecordBytes: -5}, "MaxRecordBytes"},
		{"huge max", Options{MaxRecordBytes: 2 << 30}, "MaxRecordBytes"},
		{"negative batch", Options{BatchBytes: -1}, "BatchBytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			if tc.frag == "" {
				if err != nil {
					t.Errorf("got %v; want nil", err)
				}
				return
			}
			wantErr(t, err, ErrBadOptions, tc.frag)
			if _, perr := NewParser(&tc.opts); !errors.Is(perr, ErrBadOptions) {
				t.Errorf("NewParser: got %v; want ErrBadOptions", perr)
			}
		})
	}
}

func TestFormatFlag(t *testing.T) {
	var f Format
	if f.String() != "auto" {
		t.Errorf("zero Format: got %q; want auto", f.String())
	}
	for _, tc := range []struct {
		in   string
		want Format
		ok   bool
	}{{"jsonl", FormatJSONL, true}, {" Parquet ", FormatParquet, true}, {"DIR", FormatDir, true}, {"csv", "", false}} {
		f = ""
		err := f.Set(tc.in)
		if (err == nil) != tc.ok || f != tc.want {
			t.Errorf("Set(%q): got %q, %v; want %q, ok=%v", tc.in, f, err, tc.want, tc.ok)
		}
		if !tc.ok && !errors.Is(err, ErrUnknownFormat) {
			t.Errorf("Set(%q): got %v; want ErrUnknownFormat", tc.in, err)
		}
	}
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.Var(&f, "format", "input format")
	if err := fs.Parse([]string{"--format", "lines"}); err != nil || f != FormatLines {
		t.Errorf("pflag: got %q, %v; want lines", f, err)
	}
}

func TestFormatByName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format Format
		layers []compression
	}{
		{"a.jsonl", FormatJSONL, nil},
		{"dir/a.NDJSON", FormatJSONL, nil},
		{"a.json.gz", FormatJSONL, []compression{compGzip}},
		{"a.jsonl.gz.zst", FormatJSONL, []compression{compZstd, compGzip}},
		{"a.parquet", FormatParquet, nil},
		{"notes.txt.ZST", FormatLines, []compression{compZstd}},
		{"a.csv", "", nil},
		{"a.gz", "", []compression{compGzip}},
		{"jsonl", "", nil},
	} {
		base, layers := peelCompression(tc.name)
		if got := formatByName(base); got != tc.format || !reflect.DeepEqual(layers, tc.layers) {
			t.Errorf("%s: got %q %v; want %q %v", tc.name, got, layers, tc.format, tc.layers)
		}
	}
}
