package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkTuneVsDedup sets tuning five bandings on stored signatures
// (op=tune5) beside one dedup run of the corpus they came from (op=dedup,
// the default banding for recall 0.99 at 0.8, 13x7), both through the
// command as a user runs them: a generated corpus of 20,000 documents
// (about 42 MB). Compare the rows with benchstat -col /op. The bytes are
// each command's input: the signature and truth files for tune, the corpus
// for dedup.
func BenchmarkTuneVsDedup(b *testing.B) {
	dir := b.TempDir()
	corpus := gencorpusFile(b, dir, "-docs", "20000", "-dup", "0.4", "-seed", "5")
	sigs := filepath.Join(dir, "sigs.ndsf")
	truth := filepath.Join(dir, "truth.tsv")
	quiet := IO{Out: io.Discard, Err: io.Discard}
	ctx := context.Background()
	if Main(ctx, []string{"sign", "-q", "-o", sigs, corpus}, quiet) != ExitOK ||
		Main(ctx, []string{"eval", "truth", "--threshold", "0.5", "-o", truth, corpus}, quiet) != ExitOK {
		b.Fatal("sign or eval truth failed")
	}
	size := func(paths ...string) int64 {
		var n int64
		for _, p := range paths {
			st, err := os.Stat(p)
			if err != nil {
				b.Fatal(err)
			}
			n += st.Size()
		}
		return n
	}
	b.Run("op=tune5", func(b *testing.B) {
		b.SetBytes(size(sigs, truth))
		for b.Loop() {
			if code := Main(ctx, []string{"tune", "--signatures", sigs, "--truth", truth, "--threshold", "0.8",
				"--bands", "4x8,10x12,13x8,16x6,20x5"}, quiet); code != ExitOK {
				b.Fatalf("tune: exit %d", code)
			}
		}
	})
	b.Run("op=dedup", func(b *testing.B) {
		b.SetBytes(size(corpus))
		out := filepath.Join(dir, "out")
		for b.Loop() {
			if code := Main(ctx, []string{"dedup", "-q", "--threshold", "0.8", "-o", out, corpus}, quiet); code != ExitOK {
				b.Fatalf("dedup: exit %d", code)
			}
		}
	})
}
