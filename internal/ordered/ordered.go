// Package ordered runs a three-stage pipeline — a sequential producer, parallel
// workers, a sequential consumer that sees results in the producer's order —
// so that parallel batch work gives the same output as sequential work.
package ordered

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Pipeline runs produce sequentially, work on every job in parallel on
// workers goroutines (each with its own state from newWorker), and consume
// on the results in the order produce emitted the jobs. The first error
// (or ctx's cancellation) stops every stage and is returned.
func Pipeline[J, R any](ctx context.Context, workers int, produce func(emit func(J) error) error, newWorker func() func(J) (R, error), consume func(R) error) error {
	type item struct {
		seq int
		job J
		res R
	}
	g, ctx := errgroup.WithContext(ctx)
	jobs := make(chan item, workers)
	results := make(chan item, workers)
	g.Go(func() error {
		defer close(jobs)
		seq := 0
		return produce(func(j J) error {
			select {
			case jobs <- item{seq: seq, job: j}:
				seq++
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	})
	var wg sync.WaitGroup
	for range workers {
		work := newWorker()
		wg.Add(1)
		g.Go(func() error {
			defer wg.Done()
			for it := range jobs {
				res, err := work(it.job)
				if err != nil {
					return err
				}
				it.res = res
				select {
				case results <- it:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		})
	}
	go func() { wg.Wait(); close(results) }()
	g.Go(func() error {
		pending := map[int]item{}
		next := 0
		for it := range results {
			pending[it.seq] = it
			for {
				p, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				if err := consume(p.res); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return g.Wait()
}
