package job_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"google.golang.org/protobuf/proto"

	"github.com/neardup/neardup/beam/job"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/shingle"
)

// keyForms are the ways a key could appear in bytes: raw, hex in either
// case, and the JSON array encoding/json gives a [16]byte.
func keyForms(k *shingle.Key) [][]byte {
	j, _ := json.Marshal(k)
	h := hex.EncodeToString(k[:])
	return [][]byte{k[:], []byte(h), []byte(strings.ToUpper(h)), j}
}

// base64Run is a run of base64 text long enough to be an encoded payload
// (Beam stores a Go DoFn, its fields as JSON, base64-encoded).
var base64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{24,}={0,2}`)

// withDecoded returns data followed by the decoding of every base64 run in
// it, and of the runs in those, so that a search sees inside the payloads.
func withDecoded(data []byte) []byte {
	out := slices.Clone(data)
	next := data
	for range 3 {
		var found []byte
		for _, m := range base64Run.FindAll(next, -1) {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
				if d, err := enc.DecodeString(string(m)); err == nil {
					found = append(found, d...)
					found = append(found, 0)
					break
				}
			}
		}
		out = append(out, found...)
		next = found
	}
	return out
}

// noKeyInDir fails the test if a file under dir holds key in any form, and
// returns the number of files searched.
func noKeyInDir(t *testing.T, dir string, key *shingle.Key) (files int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, f := range keyForms(key) {
			if bytes.Contains(data, f) {
				t.Errorf("%s holds the key (as %q)", path, f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestKeyed: a keyed spec runs (it was refused before): the workers read the
// key from Options.KeyFile, the outputs are neardup dedup's under the same
// key byte for byte, and no pipeline the runner is given holds the key in any
// form, though it holds the key file's name; no file the job writes, its
// outputs and the state between its pipelines, holds the key.
func TestKeyed(t *testing.T) {
	key := &shingle.Key{0x9e, 0x37, 0x79, 0xb9, 0x7f, 0x4a, 0x7c, 0x15, 0xf3, 0x9c, 0xc0, 0x60, 0x5c, 0xed, 0xc8, 0x34}
	keyFile := filepath.Join(t.TempDir(), "neardup-test-key-file")
	if err := os.WriteFile(keyFile, []byte(hex.EncodeToString(key[:])+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	spec := shingle.Prose
	spec.Key = key
	opts := &dedup.Options{Spec: spec}

	// Without the key file, the job is refused before any pipeline runs.
	b := *opts
	_, err := job.Run(context.Background(), []string{sample}, t.TempDir(), &job.Options{Dedup: &b,
		Run: func(context.Context, *beam.Pipeline) error { t.Fatal("a pipeline ran"); return nil }})
	if !errors.Is(err, dedup.ErrInvalidOptions) || !strings.Contains(err.Error(), "KeyFile") {
		t.Fatalf("keyed spec without a key file: %v; want ErrInvalidOptions naming KeyFile", err)
	}

	work := t.TempDir() // the job's TempDir
	var pipelines, workFiles int
	run := func(ctx context.Context, p *beam.Pipeline) error {
		edges, _, err := p.Build()
		if err != nil {
			return err
		}
		pb, err := graphx.Marshal(edges, &graphx.Options{Environment: &pipepb.Environment{Urn: "beam:env:loopback:v1"}})
		if err != nil {
			return err
		}
		data, err := proto.Marshal(pb)
		if err != nil {
			return err
		}
		data = withDecoded(data)
		pipelines++
		if pipelines == 1 && !bytes.Contains(data, []byte("neardup-test-key-file")) {
			t.Errorf("the first pipeline does not hold the key file's name: the test cannot see the job's configuration")
		}
		for _, f := range keyForms(key) {
			if bytes.Contains(data, f) {
				t.Errorf("pipeline %d holds the key (as %q)", pipelines, f)
			}
		}
		if err := runPrism(ctx, p); err != nil {
			return err
		}
		// The state between pipelines, before the job removes it.
		workFiles += noKeyInDir(t, work, key)
		return nil
	}
	ctx := context.Background()
	want, got := t.TempDir(), t.TempDir()
	d := *opts
	d.SkipExactPass = true // the Beam job has none: the reports compare
	wr, err := dedup.Run(ctx, []string{sample}, want, &d)
	if err != nil {
		t.Fatal(err)
	}
	b = *opts
	b.TempDir = work
	gr, err := job.Run(ctx, []string{sample}, got, &job.Options{Dedup: &b, KeyFile: keyFile, SingleFile: true, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	compare(t, want, got, wr, gr)
	if wr.Counts.VerifiedPairs != 10 || !strings.Contains(gr.Config.Spec, "siphash:") {
		t.Errorf("verified pairs %d, spec %s; want the sample's 10 pairs under a keyed spec", wr.Counts.VerifiedPairs, gr.Config.Spec)
	}
	// The keyed run's estimates differ from the unkeyed one's.
	plain := t.TempDir()
	if _, err := dedup.Run(ctx, []string{sample}, plain, &dedup.Options{}); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(read(t, plain, dedup.PairsFile), read(t, got, dedup.PairsFile)) {
		t.Errorf("pairs.tsv under the key equals the unkeyed one: the key was not used")
	}
	n := noKeyInDir(t, got, key)
	if n < 4 {
		t.Errorf("searched %d output files; want pairs, clusters, kept and report at least", n)
	}
	t.Logf("no key in %d output files and %d work files", n, workFiles)
	if workFiles == 0 {
		t.Errorf("searched no file of the job's work directory: the test cannot see the state between pipelines")
	}

	// A key file replaced under a running job is refused by the workers.
	other := filepath.Join(t.TempDir(), "other")
	os.WriteFile(other, []byte("00112233445566778899aabbccddeeff"), 0o600)
	b = *opts
	_, err = job.Run(ctx, []string{sample}, t.TempDir(), &job.Options{Dedup: &b, KeyFile: other, Run: runPrism})
	if err == nil || !strings.Contains(err.Error(), "was the key file replaced") {
		t.Errorf("workers reading another key: %v; want the key file refused", err)
	}
}
