package files_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/neardup/neardup/beam/internal/files"
	"github.com/neardup/neardup/beam/internal/tmpdir"
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

func toBlob(s string) []byte { return []byte(s) }

func init() { register.Function1x1(toBlob) }

// TestBlobsRoundTrip writes blobs (empty ones included) and reads them back
// in a second pipeline, as the Beam job's state travels between pipelines.
func TestBlobsRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{0, 1, 3000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			dir := t.TempDir()
			var want []string
			for i := range n {
				want = append(want, fmt.Sprintf("%0*d", i%7, i)[:i%7]) // lengths 0…6
			}
			p, s := beam.NewPipelineWithRoot()
			files.WriteBlobs(s, dir, "x", beam.ParDo(s, toBlob, beam.CreateList(s, append([]string{}, want...))))
			if _, err := prism.Execute(ctx, p); err != nil {
				t.Fatal(err)
			}
			p, s = beam.NewPipelineWithRoot()
			blobs, err := files.ReadBlobs(ctx, s, dir, "x")
			if err != nil {
				t.Fatal(err)
			}
			files.WriteBlobs(s, dir, "y", blobs) // read and write again
			if _, err := prism.Execute(ctx, p); err != nil {
				t.Fatal(err)
			}
			got := readAll(t, dir, "y")
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("got %d blobs; want %d", len(got), len(want))
			}
			if _, err := os.Stat(filepath.Join(dir, "y.manifest")); err != nil {
				t.Error(err)
			}
		})
	}
}

// readAll reads the blobs of a WriteBlobs from its manifest and files.
func readAll(t *testing.T, dir, name string) []string {
	t.Helper()
	m, err := os.ReadFile(filepath.Join(dir, name+".manifest"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range strings.Fields(string(m)) {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		for len(b) > 0 {
			n, k := binary.Uvarint(b)
			if k <= 0 || uint64(len(b)-k) < n {
				t.Fatalf("%s: bad record", f)
			}
			out = append(out, string(b[k:k+int(n)]))
			b = b[k+int(n):]
		}
	}
	return out
}
