package eval

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestReadPairFile(t *testing.T) {
	in := "# neardup eval truth threshold=0.5 documents=12 spec=v1/word:5/-/xxh3:0/unicode:15.0.0\n" +
		"t2\tt1\t0.75\n" + // swapped: becomes t1 t2
		"t980 t2023\n" + // articles .truth: spaces, no similarity
		"\n" +
		"\"a\\tb\"\tc\t0.900000\t-\n" + // pairs.tsv: quoted id, exact not computed
		"x\ty\t0.810000\t0.820000\n" + // pairs.tsv: exact wins
		"t1\tt2\t0.1\n" + // duplicate: the first line's value is kept
		"s\ts\t1\n" // self pair: dropped
	pf, err := ReadPairFile(strings.NewReader(in), "in.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if pf.Threshold != 0.5 || pf.Documents != 12 || !strings.HasPrefix(pf.Spec, "v1/word:5") {
		t.Errorf("header: %+v", pf)
	}
	want := []LabeledPair{{"a\tb", "c", 0.9}, {"t1", "t2", 0.75}, {"t2023", "t980", math.NaN()}, {"x", "y", 0.82}}
	if len(pf.Pairs) != len(want) {
		t.Fatalf("got %d pairs %+v; want %d", len(pf.Pairs), pf.Pairs, len(want))
	}
	for i, w := range want {
		g := pf.Pairs[i]
		if g.A != w.A || g.B != w.B || g.HasJ() != w.HasJ() || g.HasJ() && g.J != w.J {
			t.Errorf("pair %d: got %+v; want %+v", i, g, w)
		}
	}
	for _, bad := range []string{"onlyone\n", "a\tb\tzero\n", "a b 1.5\n", "# threshold=2\n", "\"a\tb\n"} {
		_, err := ReadPairFile(strings.NewReader(bad), "bad.tsv")
		if !errors.Is(err, ErrPairFile) || !strings.Contains(err.Error(), "bad.tsv:1") {
			t.Errorf("%q: err = %v; want ErrPairFile naming bad.tsv:1", bad, err)
		}
	}
}

// TestTruthFileRoundTrip: what WriteTruthHeader and AppendPairLine write
// reads back exactly, similarities to the bit.
func TestTruthFileRoundTrip(t *testing.T) {
	pairs := []LabeledPair{{"#x", "a b", 2.0 / 3}, {"", "z", 0.8}, {"q\"", "r\n", 0.7999999999999999}, {"u", "v", 1}}
	pairs = SortPairs(pairs)
	var buf bytes.Buffer
	WriteTruthHeader(&buf, TruthHeader{Threshold: 0.7, Documents: 9, Spec: "prose"})
	var line []byte
	for _, p := range pairs {
		line = AppendPairLine(line[:0], p.A, p.B, p.J)
		buf.Write(line)
	}
	pf, err := ReadPairFile(&buf, "rt")
	if err != nil {
		t.Fatal(err)
	}
	if pf.Threshold != 0.7 || pf.Documents != 9 || pf.Spec != "prose" || len(pf.Pairs) != len(pairs) {
		t.Fatalf("got %+v", pf)
	}
	for i := range pairs {
		if pf.Pairs[i] != pairs[i] {
			t.Errorf("pair %d: got %+v; want %+v", i, pf.Pairs[i], pairs[i])
		}
	}
}

// FuzzReadPairFile: any input parses or fails with ErrPairFile, never
// panics; what parses writes back and reads back to the same pairs.
func FuzzReadPairFile(f *testing.F) {
	for _, s := range []string{"a\tb\t0.5\n", "t1 t2\n", "# threshold=0.3 documents=4\nx\ty\t-\t1\n", "\"a\\\"\"\tb\n", "a\tb\t0.25\t-\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		pf, err := ReadPairFile(strings.NewReader(in), "fuzz")
		if err != nil {
			if !errors.Is(err, ErrPairFile) {
				t.Fatalf("error %v does not wrap ErrPairFile", err)
			}
			return
		}
		var buf bytes.Buffer
		for _, p := range pf.Pairs {
			j := p.J
			if !p.HasJ() {
				j = 0.5
			}
			buf.Write(AppendPairLine(nil, p.A, p.B, j))
		}
		back, err := ReadPairFile(&buf, "back")
		if err != nil {
			t.Fatalf("re-reading %q: %v", buf.String(), err)
		}
		if len(back.Pairs) != len(pf.Pairs) {
			t.Fatalf("%d pairs back; want %d", len(back.Pairs), len(pf.Pairs))
		}
		for i, p := range pf.Pairs {
			if back.Pairs[i].A != p.A || back.Pairs[i].B != p.B {
				t.Fatalf("pair %d: %q %q back as %q %q", i, p.A, p.B, back.Pairs[i].A, back.Pairs[i].B)
			}
		}
	})
}
