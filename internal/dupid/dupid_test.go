package dupid

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/neardup/neardup/corpus"
)

// input is one Add call of a test.
type input struct {
	id  string
	pos Position
}

// randomInputs returns n ids drawn from a pool of distinct ids (so that many
// repeat), spread over three files; the third has no line numbers (as
// corpus.FormatDir's files), and indexes skip now and then (records the
// caller leaves out).
func randomInputs(rng *rand.Rand, n, distinct int) []input {
	in := make([]input, n)
	files := []string{"a.jsonl", "b.jsonl", "dir/c.txt"}
	line, index := int64(0), int64(-1)
	for i := range in {
		if i%(n/3+1) == 0 {
			line = 0
		}
		line += 1 + int64(rng.IntN(2)) // blank lines leave gaps
		index++
		if rng.IntN(7) == 0 {
			index += 1 + int64(rng.IntN(3))
		}
		id := "doc-" + strconv.Itoa(rng.IntN(distinct))
		if rng.IntN(10) == 0 {
			id += string(rune(0x400 + rng.IntN(50))) // some non-ASCII
		}
		in[i] = input{id, Position{File: files[i/(n/3+1)], Line: line, Index: index}}
		if i/(n/3+1) == 2 {
			in[i].pos.Line = 0
		}
	}
	return in
}

// reference finds the duplicates with a map: every later occurrence, in
// input order, with its first occurrence.
func reference(in []input) []Duplicate {
	first := map[string]int{}
	var out []Duplicate
	for i, x := range in {
		if f, ok := first[x.id]; ok {
			out = append(out, Duplicate{ID: []byte(x.id), First: in[f].pos, Second: x.pos, FirstN: int64(f), N: int64(i)})
			continue
		}
		first[x.id] = i
	}
	return out
}

func newDetector(t testing.TB, opts *Options, in []input) *Detector {
	t.Helper()
	d, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	for _, x := range in {
		if err := d.Add([]byte(x.id), x.pos); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func all(t testing.TB, d *Detector) []Duplicate {
	t.Helper()
	var got []Duplicate
	err := d.All(func(dup *Duplicate) error {
		c := *dup
		c.ID = []byte(string(dup.ID))
		got = append(got, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestAgainstMap compares All and First with a map-based reference, in
// memory and spilled, with real hashes and with a hash that makes most
// distinct ids collide (so that only the exact comparison tells them apart),
// keeping the ids and asking them of Options.IDAt, added with Add and with
// AddHash.
func TestAgainstMap(t *testing.T) {
	for _, mode := range []string{"log", "lookup", "lookup-hashed"} {
		t.Run(mode, func(t *testing.T) { testAgainstMap(t, mode) })
	}
}

func testAgainstMap(t *testing.T, mode string) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name     string
		n, ids   int
		memory   int64
		collide  bool
		wantRuns bool
	}{
		{"none repeat", 5000, 1 << 30, 0, false, false},
		{"in memory", 20000, 8000, 0, false, false},
		{"spilled", 20000, 8000, 1, false, true},
		{"collisions", 20000, 8000, 0, true, false},
		{"collisions spilled", 20000, 8000, 1, true, true},
		{"one id", 3000, 1, 1, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			in := randomInputs(rng, c.n, c.ids)
			want := reference(in)
			opts := &Options{Memory: c.memory, TempDir: dir}
			if mode != "log" {
				byIndex := map[int64][]byte{}
				for _, x := range in {
					byIndex[x.pos.Index] = []byte(x.id)
				}
				opts.IDAt = func(i int64) []byte { return byIndex[i] }
			}
			mk := func() *Detector {
				d, err := New(opts)
				if err != nil {
					t.Fatal(err)
				}
				if c.collide {
					d.hash = func(b []byte) uint64 { return uint64(len(b)) << 60 } // few distinct values, high bits
				}
				t.Cleanup(func() { d.Close() })
				for _, x := range in {
					var err error
					if mode == "lookup-hashed" {
						err = d.AddHash(d.hash([]byte(x.id)), nil, x.pos)
					} else {
						err = d.Add([]byte(x.id), x.pos)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				return d
			}
			d := mk()
			got := all(t, d)
			// Counted once every value is placed (the hashes are
			// scattered on a goroutine of their own while adding).
			if spilled := d.SpilledBytes() > 0; spilled != c.wantRuns {
				t.Errorf("spilled %d bytes; want spilling %v", d.SpilledBytes(), c.wantRuns)
			}
			if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
				t.Errorf("All: got %d duplicates; want %d", len(got), len(want))
				for i := range min(len(got), len(want)) {
					if !reflect.DeepEqual(got[i], want[i]) {
						t.Fatalf("first difference at %d: got %+v; want %+v", i, got[i], want[i])
					}
				}
			}
			first, err := mk().First()
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case len(want) == 0 && first != nil:
				t.Errorf("First: got %+v; want none", first)
			case len(want) > 0 && (first == nil || !reflect.DeepEqual(*first, want[0])):
				t.Errorf("First: got %+v; want %+v", first, want[0])
			}
			// Every run is removed once the detectors are done.
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("%d files left in the temporary directory", len(ents))
			}
		})
	}
}

func TestRecordError(t *testing.T) {
	d := newDetector(t, nil, []input{
		{"t1", Position{"a.jsonl", 3, 2}},
		{"t\"2", Position{"docs/x.txt", 0, 3}},
		{"t\"2", Position{"b.jsonl", 7, 9}},
		{"t1", Position{"b.jsonl", 8, 10}},
	})
	dup, err := d.First()
	if err != nil {
		t.Fatal(err)
	}
	re := dup.RecordError("id")
	if want := `b.jsonl:7: field "id": dupid: duplicate id "t\"2", first at docs/x.txt`; re.Error() != want {
		t.Errorf("got %q; want %q", re.Error(), want)
	}
	if !errors.Is(re, ErrDuplicate) || re.Index != 9 || re.Line != 7 {
		t.Errorf("got %#v; want index 9, line 7, wrapping ErrDuplicate", re)
	}
	var _ error = (*corpus.RecordError)(nil)
	if _, err := d.First(); !errors.Is(err, ErrDone) {
		t.Errorf("First after First: got %v; want ErrDone", err)
	}
	if err := d.Add([]byte("x"), Position{}); !errors.Is(err, ErrDone) {
		t.Errorf("Add after First: got %v; want ErrDone", err)
	}
}

func TestAllStops(t *testing.T) {
	d := newDetector(t, nil, []input{{"a", Position{"f", 1, 0}}, {"a", Position{"f", 2, 1}}, {"a", Position{"f", 3, 2}}})
	stop := errors.New("stop")
	calls := 0
	err := d.All(func(*Duplicate) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("got %v after %d calls; want the callback's error after 1", err, calls)
	}
}

func TestOptions(t *testing.T) {
	if _, err := New(&Options{Memory: -1}); !errors.Is(err, ErrBadOptions) {
		t.Errorf("negative Memory: got %v; want ErrBadOptions", err)
	}
	if o := (*Options)(nil).EnsureDefaults(); o.Memory != DefaultMemory {
		t.Errorf("default Memory %d; want %d", o.Memory, DefaultMemory)
	}
	if s := fmt.Sprint(Position{"f", 0, 1}, " ", Position{"f", 2, 1}); s != "f f:2" {
		t.Errorf("Position strings %q; want %q", s, "f f:2")
	}
}

// TestCloseRemovesRuns: a Detector closed before First or All (a run that
// failed) leaves no temporary file.
// Under IDAt the spills are the hashes', made on the Detector's goroutine,
// which Close stops first.
func TestCloseRemovesRuns(t *testing.T) {
	for _, lookup := range []bool{false, true} {
		t.Run(fmt.Sprint("lookup=", lookup), func(t *testing.T) { testCloseRemovesRuns(t, lookup) })
	}
}

func testCloseRemovesRuns(t *testing.T, lookup bool) {
	dir := t.TempDir()
	o := &Options{Memory: 1, TempDir: dir}
	if lookup {
		o.IDAt = func(int64) []byte { return nil }
	}
	d, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range randomInputs(rand.New(rand.NewPCG(3, 4)), 20000, 20000) {
		if err := d.Add([]byte(x.id), x.pos); err != nil {
			t.Fatal(err)
		}
	}
	if ents, _ := os.ReadDir(dir); !lookup && (d.SpilledBytes() == 0 || len(ents) == 0) {
		t.Fatalf("spilled %d bytes in %d files; want some", d.SpilledBytes(), len(ents))
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d files left after Close", len(ents))
	}
	if _, err := d.First(); !errors.Is(err, ErrDone) {
		t.Errorf("First after Close: got %v; want ErrDone", err)
	}
}
