package index

import (
	"fmt"
	"testing"
)

// TestKeyWidths: on every backend, an index of 4-byte keys and one of
// 8-byte keys answer the same; each reopens with its own width (read from
// the meta record, whatever Options.BucketKeyBytes asks), so an index made
// before layout version 3 keeps its 4-byte keys.
func TestKeyWidths(t *testing.T) {
	for _, b := range []backend{memoryBackend(), pebbleBackend(0), redisBackend(false)} {
		t.Run(b.name, func(t *testing.T) {
			var got [2][]string
			for i, w := range []int{NarrowKeyBytes, WideKeyBytes} {
				x, reopen := b.open(t, &Options{BucketKeyBytes: w})
				if c := x.Config(); c.BucketKeyBytes != w {
					t.Fatalf("new index with BucketKeyBytes %d has %d-byte keys", w, c.BucketKeyBytes)
				}
				docs := buildDocs(t, x.Config(), 200)
				if err := x.Insert(ctx, docs); err != nil {
					t.Fatal(err)
				}
				if err := x.Close(); err != nil {
					t.Fatal(err)
				}
				other := NarrowKeyBytes + WideKeyBytes - w
				y, err := reopen(&Options{BucketKeyBytes: other})
				if err != nil {
					t.Fatal(err)
				}
				if c := y.Config(); c.BucketKeyBytes != w {
					t.Errorf("reopened with BucketKeyBytes %d: %d-byte keys; want the stored %d", other, c.BucketKeyBytes, w)
				}
				if r, err := y.Check(ctx); err != nil || !r.OK() {
					t.Errorf("check: %s, %v", r, err)
				}
				for _, d := range docs[:60] {
					ms, err := y.Query(ctx, d.Sig, &QueryOptions{Threshold: 0.5, Limit: 20})
					if err != nil {
						t.Fatal(err)
					}
					got[i] = append(got[i], fmt.Sprint(ms))
				}
				y.Close()
			}
			for q := range got[0] {
				if got[0][q] != got[1][q] {
					t.Errorf("query %d: %s with 4-byte keys, %s with 8-byte keys", q, got[0][q], got[1][q])
				}
			}
		})
	}
}
