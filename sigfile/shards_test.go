package sigfile_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
)

// writeShards writes recs split into n shards named prefix-SSSSS-of-NNNNN
// and returns their paths, in shard order.
func writeShards(t *testing.T, prefix string, h sigfile.Header, recs []record, n int) []string {
	t.Helper()
	var paths []string
	for i := range n {
		h := h
		h.Shard, h.Shards = i, n
		path := sigfile.ShardName(prefix, i, n)
		w, err := sigfile.Create(path, h)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs[len(recs)*i/n : len(recs)*(i+1)/n] {
			if err := w.Add(r.id, r.sig); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

func readPath(t *testing.T, name string) ([]record, error) {
	t.Helper()
	r, err := sigfile.Open(name, nil)
	if err != nil {
		return nil, err
	}
	_, recs, err := drain(r)
	return recs, err
}

func TestShards(t *testing.T) {
	dir := t.TempDir()
	h := sigfile.MinHashHeader(shingle.Prose, minhash.Params{K: 16, Bits: 8})
	h.BlockBytes = 128
	recs := randomRecords(rand.New(rand.NewPCG(9, 10)), h, 100, 8)
	// 11 shards, one of them empty: names sort in shard order only because
	// of the zero padding, and shard 10 would sort before 2 without it.
	paths := writeShards(t, filepath.Join(dir, "sigs"), h, recs, 11)
	os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, ".sigs-00003-of-00011.123.tmp"), []byte("partial"), 0o644)

	for _, name := range []string{dir, filepath.Join(dir, "sigs-*")} {
		got, err := readPath(t, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		equalRecords(t, got, recs)
	}
	// OpenFiles reads shards in shard order whatever the order given.
	rev := slices.Clone(paths)
	slices.Reverse(rev)
	r, err := sigfile.OpenFiles(rev, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, got, err := drain(r); err != nil {
		t.Fatal(err)
	} else {
		equalRecords(t, got, recs)
	}
	// One shard opened alone reads as itself.
	got, err := readPath(t, paths[1])
	if err != nil {
		t.Fatal(err)
	}
	equalRecords(t, got, recs[100/11:200/11])

	for name, c := range map[string]struct {
		paths []string
		want  error
		msg   string
	}{
		"missing":   {slices.Delete(slices.Clone(paths), 3, 5), sigfile.ErrShards, "missing shard 3, 4"},
		"twice":     {append(slices.Clone(paths), paths[2]), sigfile.ErrShards, "shard 2 of 11 is both"},
		"alone":     {paths[4:5], sigfile.ErrShards, "missing shard 0, 1, 2, 3, 5"},
		"none":      {nil, sigfile.ErrShards, "no files"},
		"not a sig": {append(slices.Clone(paths), filepath.Join(dir, "_SUCCESS")), sigfile.ErrTruncated, "_SUCCESS"},
	} {
		_, err := sigfile.OpenFiles(c.paths, nil)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v; want %v saying %q", name, err, c.want, c.msg)
		}
	}

	// Shards of another output (other count, other params) or an unsharded
	// file do not mix.
	other := t.TempDir()
	p2 := writeShards(t, filepath.Join(other, "a"), h, recs, 2)
	h3 := h
	h3.MinHash.Seed = 1
	p3 := writeShards(t, filepath.Join(other, "b"), h3, recs, 11)
	single := filepath.Join(other, "single")
	w, _ := sigfile.Create(single, h)
	w.Close()
	for name, c := range map[string]struct {
		paths []string
		want  error
	}{
		"other count":  {append(slices.Clone(paths[:1]), p2[1]), sigfile.ErrShards},
		"other params": {append(slices.Clone(paths[:10]), p3[10]), sigfile.ErrParamsMismatch},
		"unsharded":    {append(slices.Clone(paths), single), sigfile.ErrShards},
	} {
		if _, err := sigfile.OpenFiles(c.paths, nil); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v; want %v", name, err, c.want)
		}
	}

	// Unsharded files are read in the order given.
	a, b := filepath.Join(other, "x"), filepath.Join(other, "y")
	for i, p := range []string{a, b} {
		w, _ := sigfile.Create(p, h)
		for _, r := range recs[50*i : 50*(i+1)] {
			w.Add(r.id, r.sig)
		}
		w.Close()
	}
	r, err = sigfile.OpenFiles([]string{b, a}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, got, err = drain(r)
	if err != nil {
		t.Fatal(err)
	}
	equalRecords(t, got, append(slices.Clone(recs[50:]), recs[:50]...))

	// A damaged shard fails the stream, naming it.
	data, _ := os.ReadFile(paths[7])
	os.WriteFile(paths[7], data[:len(data)-1], 0o644)
	if _, err := readPath(t, dir); !errors.Is(err, sigfile.ErrTruncated) || !strings.Contains(err.Error(), paths[7]) {
		t.Errorf("a cut shard: got %v; want ErrTruncated naming %s", err, paths[7])
	}
	if _, err := sigfile.Open(filepath.Join(dir, "nothing-*"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a glob matching nothing: got %v; want ErrNotExist", err)
	}
}
