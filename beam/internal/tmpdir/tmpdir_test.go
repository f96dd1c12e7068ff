package tmpdir_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/neardup/neardup/beam/internal/tmpdir"
)

func TestMain(m *testing.M) {
	beamlog.LogLevel = "warn"
	beam.Init()
	os.Exit(m.Run())
}

// TestPrivate runs a pipeline on Prism inside a private temporary directory:
// whatever Beam leaves there goes with the directory, and TMPDIR is restored.
func TestPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("os.TempDir does not read TMPDIR")
	}
	t.Setenv("TMPDIR", t.TempDir()) // restored after the test
	before := os.TempDir()
	cleanup, err := tmpdir.Private("tmpdir-test-")
	if err != nil {
		t.Fatal(err)
	}
	dir := os.TempDir()
	if filepath.Dir(dir) != before || !strings.HasPrefix(filepath.Base(dir), "tmpdir-test-") {
		t.Fatalf("got os.TempDir %s; want a tmpdir-test-* directory in %s", dir, before)
	}
	p, s := beam.NewPipelineWithRoot()
	beam.Create(s, 1, 2, 3)
	if _, err := prism.Execute(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "beamloopbackworker-*"))
	t.Logf("Beam left %d loopback placeholder files in the private directory", len(left))
	cleanup()
	if got := os.TempDir(); got != before {
		t.Errorf("got os.TempDir %s after cleanup; want %s", got, before)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("got %v for the private directory after cleanup; want it removed", err)
	}
	if left, _ := filepath.Glob(filepath.Join(before, "beamloopbackworker-*")); len(left) > 0 {
		t.Errorf("got %s outside the private directory; want none", left)
	}
}
