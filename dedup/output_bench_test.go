package dedup

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/cputime"
)

// BenchmarkCopyKept copies the kept records of 128 MiB of short JSON Lines
// documents (about 250 bytes each, one in eleven removed at random, as at
// 5M short documents) to a file through the kept writer (O_DIRECT where
// the file system allows), then syncs it: way=record is the loop CopyKept
// had (a Writer.Write a record, on one goroutine), way=runs is CopyKept.
func BenchmarkCopyKept(b *testing.B) {
	dir := b.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	rng := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	var keep corpus.Bitset
	words := strings.Fields("the of and to a in is it you that he was for on are with as his they be at one have this from")
	n := int64(0)
	for sb.Len() < 128<<20 {
		fmt.Fprintf(&sb, `{"id":"doc-%d","text":"`, n)
		for k := 20 + rng.IntN(30); k > 0; k-- {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(' ')
		}
		sb.WriteString("\"}\n")
		if rng.IntN(11) != 0 {
			keep.Set(n)
		}
		n++
	}
	if err := os.WriteFile(in, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	size := int64(sb.Len())
	sb = strings.Builder{}
	opts := &corpus.Options{}
	for _, way := range []string{"record", "runs"} {
		b.Run("way="+way, func(b *testing.B) {
			b.SetBytes(size)
			cpu0 := cputime.Process()
			for b.Loop() {
				writeBenchFile(b, filepath.Join(dir, "kept"), func(f *os.File, name string) error {
					direct, _ := openDirect(name)
					w := newDirectWriter(f, direct, directBufSize)
					var err error
					if way == "record" {
						err = copyKeptByRecord(w, in, opts, keep)
					} else {
						_, err = corpus.CopyKept(context.Background(), w, []string{in}, opts, keep)
					}
					if cerr := w.close(); err == nil {
						err = cerr
					}
					return err
				})
			}
			cputime.ReportPerOp(b, cputime.Process()-cpu0)
		})
	}
}

// copyKeptByRecord is corpus.CopyKept as it was: one Writer.Write a kept
// record.
func copyKeptByRecord(dst io.Writer, in string, opts *corpus.Options, keep corpus.Selection) error {
	w, err := corpus.NewWriter(dst, opts)
	if err != nil {
		return err
	}
	r, err := corpus.NewReader([]string{in}, opts)
	if err != nil {
		return err
	}
	defer r.Close()
	var b corpus.Batch
	for {
		err := r.Next(&b)
		if err == io.EOF {
			return w.Flush()
		}
		if err != nil {
			return err
		}
		for i := range b.Records {
			if keep.Contains(b.Records[i].Index) {
				if err := w.Write(&b.Records[i]); err != nil {
					return err
				}
			}
		}
	}
}
