package ordered

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

func TestPipelineKeepsOrder(t *testing.T) {
	for _, workers := range []int{1, 2, 7} {
		var got []int
		err := Pipeline(context.Background(), workers,
			func(emit func(int) error) error {
				for i := 0; i < 500; i++ {
					if err := emit(i); err != nil {
						return err
					}
				}
				return nil
			},
			func() func(int) (int, error) {
				r := rand.New(rand.NewPCG(uint64(workers), 0))
				return func(j int) (int, error) {
					time.Sleep(time.Duration(r.IntN(50)) * time.Microsecond)
					return j * j, nil
				}
			},
			func(v int) error { got = append(got, v); return nil })
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != i*i {
				t.Fatalf("workers %d: result %d = %d; want %d", workers, i, v, i*i)
			}
		}
		if len(got) != 500 {
			t.Fatalf("workers %d: %d results; want 500", workers, len(got))
		}
	}
}

func TestPipelineStopsOnError(t *testing.T) {
	boom := errors.New("boom")
	err := Pipeline(context.Background(), 3,
		func(emit func(int) error) error {
			for i := 0; ; i++ {
				if err := emit(i); err != nil {
					return err
				}
			}
		},
		func() func(int) (int, error) {
			return func(j int) (int, error) {
				if j == 100 {
					return 0, boom
				}
				return j, nil
			}
		},
		func(int) error { return nil })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v; want boom", err)
	}
}
