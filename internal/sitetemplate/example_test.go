package sitetemplate_test

import (
	"fmt"
	"strings"

	"github.com/neardup/neardup/internal/sitetemplate"
)

// Wrap puts a text between the template's header and its sidebar and
// footer, each on lines of its own.
func Example() {
	page := sitetemplate.Wrap("The article's own text.")
	lines := strings.Split(strings.TrimSuffix(page, "\n"), "\n")
	fmt.Println(len(lines), "lines,", sitetemplate.Words(), "words of template")
	fmt.Println(lines[len(sitetemplate.Header)])
	// Output:
	// 34 lines, 602 words of template
	// The article's own text.
}
