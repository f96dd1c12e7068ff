package goldentext_test

import (
	"fmt"
	"unicode/utf8"

	"github.com/neardup/neardup/internal/goldentext"
)

// A golden test ranges over Texts and checks each text's features or
// signature against a pinned file named after it. Here, the bytes and runes
// of each text and whether it is valid UTF-8: the cases a shingler must
// survive.
func Example() {
	for _, g := range goldentext.Texts {
		fmt.Printf("%-7s %3d bytes %3d runes  valid UTF-8: %t\n",
			g.Name, len(g.Text), utf8.RuneCountInString(g.Text), utf8.ValidString(g.Text))
	}
	// Output:
	// ascii    66 bytes  66 runes  valid UTF-8: true
	// latin    79 bytes  70 runes  valid UTF-8: true
	// cjk      93 bytes  31 runes  valid UTF-8: true
	// emoji    82 bytes  51 runes  valid UTF-8: true
	// invalid  36 bytes  36 runes  valid UTF-8: false
	// empty     0 bytes   0 runes  valid UTF-8: true
}
