package index

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestBackendsAgree runs one random sequence of check-and-inserts, inserts,
// deletes, queries and gets on every backend and compares the answers: the
// algorithm is one (engine.go), so they must be the same, match for match.
// Redis joins when a server is there.
func TestBackendsAgree(t *testing.T) {
	type handle struct {
		name string
		x    Index
	}
	opts := &Options{BucketCap: 2} // small, so that full buckets and dropped postings happen
	var xs []handle
	for _, b := range []backend{pebbleBackend(1 << 20), memoryBackend()} {
		x, _ := b.open(t, opts)
		xs = append(xs, handle{b.name, x})
	}
	if addrs := redisAddrs(false); redisUp(addrs) {
		x, _ := redisBackend(false).open(t, opts)
		xs = append(xs, handle{"redis", x})
	} else {
		t.Logf("no Redis at %v: comparing Pebble and Memory only", addrs)
	}
	c := xs[0].x.Config()
	g := newTextGen(21)
	var texts, ids []string
	text := func() string {
		if len(texts) > 0 && g.rng.IntN(2) == 0 {
			return g.variant(texts[g.rng.IntN(len(texts))], g.rng.IntN(3))
		}
		s := g.text(40 + g.rng.IntN(40))
		texts = append(texts, s)
		return s
	}
	n := 400
	if testing.Short() {
		n = 150
	}
	for step := range n {
		var what string
		answers := make([]any, len(xs))
		var do func(x Index) (any, error)
		switch op := g.rng.IntN(10); {
		case op < 5:
			var docs []Doc
			for j := range 1 + g.rng.IntN(4) {
				id := fmt.Sprintf("d%d-%d", step, j)
				if j == 2 && len(ids) > 0 {
					id = ids[g.rng.IntN(len(ids))] // an id that may be stored
				}
				docs = append(docs, Doc{ID: id, Sig: signOf(t, c, text()), Meta: []byte(id)})
				ids = append(ids, id)
			}
			what = fmt.Sprintf("CheckAndInsert of %d", len(docs))
			do = func(x Index) (any, error) {
				res, err := x.CheckAndInsert(ctx, docs, &QueryOptions{Threshold: 0.6, Limit: 3})
				for i := range res { // errors compare by text
					if res[i].Err != nil {
						res[i].Matches, res[i].Err = nil, fmt.Errorf("%s", res[i].Err)
					}
				}
				return res, err
			}
		case op < 6:
			// Copies of one text, unchecked: they fill their buckets.
			base := text()
			var docs []Doc
			for j := range 1 + g.rng.IntN(3) {
				id := fmt.Sprintf("i%d-%d", step, j)
				ids = append(ids, id)
				docs = append(docs, Doc{ID: id, Sig: signOf(t, c, g.variant(base, g.rng.IntN(2)))})
			}
			what = fmt.Sprintf("Insert of %d", len(docs))
			do = func(x Index) (any, error) { return nil, x.Insert(ctx, docs) }
		case op < 7 && len(ids) > 0:
			id := ids[g.rng.IntN(len(ids))]
			what = "Delete " + id
			do = func(x Index) (any, error) { return nil, x.Delete(ctx, id) }
		case op < 9:
			sig := signOf(t, c, text())
			what = "Query"
			do = func(x Index) (any, error) { return x.Query(ctx, sig, &QueryOptions{Threshold: 0.5, Limit: 20}) }
		default:
			if len(ids) == 0 {
				continue
			}
			id := ids[g.rng.IntN(len(ids))]
			what = "Get " + id
			do = func(x Index) (any, error) { return x.Get(ctx, id) }
		}
		for i, h := range xs {
			a, err := do(h.x)
			if err != nil {
				a = err.Error()
			}
			answers[i] = a
		}
		for i := 1; i < len(xs); i++ {
			if !reflect.DeepEqual(answers[i], answers[0]) {
				t.Fatalf("step %d, %s: %s answered %+v; %s answered %+v", step, what, xs[i].name, answers[i], xs[0].name, answers[0])
			}
		}
	}
	for _, h := range xs {
		r := mustCheck(t, h.x)
		if r.CappedPostings == 0 {
			t.Errorf("%s: no posting was dropped at a full bucket; the test does not cover the cap", h.name)
		}
		t.Logf("%s: %s", h.name, r)
	}
}

// redisUp reports whether a Redis server answers at addrs (under CI it must:
// see needRedis).
func redisUp(addrs []string) bool {
	if os.Getenv("CI") == "true" {
		return true
	}
	c := redis.NewClient(&redis.Options{Addr: addrs[0], DialTimeout: time.Second})
	defer c.Close()
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return c.Ping(cctx).Err() == nil
}
