package cli

import (
	"github.com/neardup/neardup/internal/dupid"
)

// idCheck finds the documents whose id repeats an earlier document's, for
// the commands that write ids (sign, eval truth): a repeated id is an error
// naming the file and line of the second occurrence, or, under --skip-bad,
// that later record is skipped as bad (and listed in --bad-out).
type idCheck struct {
	det     *dupid.Detector
	skipBad bool
	bad     *badOut
	dropped int64
}

// newIDCheck returns an idCheck with dupid's default memory budget,
// spilling to the system's temporary directory.
func newIDCheck(skipBad bool, bad *badOut) (*idCheck, error) {
	det, err := dupid.New(nil)
	if err != nil {
		return nil, err
	}
	return &idCheck{det: det, skipBad: skipBad, bad: bad}, nil
}

// add notes the id of the next document, in input order, and where it is.
func (c *idCheck) add(id []byte, pos dupid.Position) error {
	return c.det.Add(id, pos)
}

// finish reports the first repeated id as an error, or under --skip-bad
// lists every later occurrence in --bad-out and calls drop with its
// document number (the 0-based count of add calls before it), in ascending
// order.
func (c *idCheck) finish(drop func(n int64) error) error {
	if !c.skipBad {
		dup, err := c.det.First()
		if err != nil {
			return err
		}
		if dup != nil {
			return dup.RecordError("")
		}
		return nil
	}
	return c.det.All(func(dup *dupid.Duplicate) error {
		c.dropped++
		if err := c.bad.addDuplicate(dup); err != nil {
			return err
		}
		return drop(dup.N)
	})
}

// close removes the detector's temporary files.
func (c *idCheck) close() { c.det.Close() }
