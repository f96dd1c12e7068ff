package ordered_test

import (
	"context"
	"fmt"

	"github.com/neardup/neardup/internal/ordered"
)

func Example() {
	var out []int
	ordered.Pipeline(context.Background(), 4,
		func(emit func(int) error) error {
			for i := 1; i <= 5; i++ {
				emit(i)
			}
			return nil
		},
		func() func(int) (int, error) { return func(x int) (int, error) { return x * x, nil } },
		func(y int) error { out = append(out, y); return nil })
	fmt.Println(out)
	// Output: [1 4 9 16 25]
}
