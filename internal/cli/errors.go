package cli

import (
	"errors"

	"github.com/neardup/neardup/corpus"
)

// describe renders err for the user: its message, and the flag to change
// where the library that made it cannot know the flag's name.
func describe(err error) string {
	msg := err.Error()
	if errors.Is(err, corpus.ErrTooLarge) {
		msg += " (raise the limit with --max-record-bytes, or skip such records with --skip-bad)"
	}
	return msg
}
