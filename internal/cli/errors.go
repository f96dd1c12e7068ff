package cli

import (
	"errors"
	"strings"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sigfile"
)

// describe renders err for the user: its message, and the flag to change
// where the library that made it cannot know the flag's name.
func describe(err error) string {
	msg := err.Error()
	if errors.Is(err, corpus.ErrTooLarge) {
		msg += " (raise the limit with --max-record-bytes, or skip such records with --skip-bad)"
	}
	if (errors.Is(err, index.ErrSpecMismatch) || errors.Is(err, sigfile.ErrSpecMismatch)) && strings.Contains(msg, "siphash:") {
		msg += " (a keyed spec needs its key: --key-file, with the --shingle it was made with)"
	}
	return msg
}
