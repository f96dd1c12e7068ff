package cli

import (
	"bufio"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/atomicfile"
	"github.com/neardup/neardup/internal/dupid"
)

// outputFile is a command's output: standard output for "-", else a file
// written under a temporary name in its directory and renamed by commit, so
// that a run that fails (or is killed) leaves no partial file that looks
// complete. Writes are buffered.
type outputFile struct {
	*bufio.Writer
	f *atomicfile.File // nil for standard output
}

// createOutput starts writing path ("-": stdio.Out).
func createOutput(stdio IO, path string) (*outputFile, error) {
	if path == "-" {
		return &outputFile{Writer: bufio.NewWriterSize(stdio.Out, 1<<20)}, nil
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	return &outputFile{Writer: bufio.NewWriterSize(f, 1<<20), f: f}, nil
}

// commit flushes the output and gives the file its final name.
func (o *outputFile) commit() error {
	if err := o.Flush(); err != nil {
		o.abort()
		return fmt.Errorf("write %s: %w", o.name(), err)
	}
	if o.f == nil {
		return nil
	}
	return o.f.Commit()
}

// abort removes the temporary file, if any; it does nothing after commit, so
// it can be deferred.
func (o *outputFile) abort() {
	if o != nil && o.f != nil {
		o.f.Abort()
	}
}

func (o *outputFile) name() string {
	if o.f == nil {
		return "standard output"
	}
	return o.f.Path()
}

// badOutFlag is --bad-out: where to list the records --skip-bad skipped.
type badOutFlag struct{ path string }

func (f *badOutFlag) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.path, "bad-out", "", "with --skip-bad, list the skipped records in this file, one a line: file, line, record index, field, reason (tab-separated)")
}

// check refuses --bad-out without --skip-bad (nothing would be skipped).
func (f *badOutFlag) check(skipBad bool) error {
	if f.path != "" && !skipBad {
		return usagef("--bad-out lists the records --skip-bad skips: give --skip-bad too")
	}
	if f.path == "-" {
		return usagef("--bad-out needs a file name, not -")
	}
	return nil
}

// badOut writes the --bad-out file; a nil *badOut (no --bad-out) does
// nothing.
type badOut struct {
	out *outputFile
	log *corpus.BadLog
}

// open starts the --bad-out file, or returns nil without --bad-out.
func (f *badOutFlag) open(stdio IO) (*badOut, error) {
	if f.path == "" {
		return nil, nil
	}
	out, err := createOutput(stdio, f.path)
	if err != nil {
		return nil, err
	}
	return &badOut{out: out, log: corpus.NewBadLog(out)}, nil
}

// add lists records skipped while reading.
func (b *badOut) add(errs []corpus.RecordError) error {
	if b == nil {
		return nil
	}
	return b.log.Add(errs)
}

// addDuplicate lists a record skipped for its repeated id.
func (b *badOut) addDuplicate(dup *dupid.Duplicate) error {
	if b == nil {
		return nil
	}
	return b.log.Write(dup.RecordError(""))
}

// commit writes the file under its final name.
func (b *badOut) commit() error {
	if b == nil {
		return nil
	}
	if err := b.log.Flush(); err != nil {
		b.out.abort()
		return err
	}
	return b.out.commit()
}

// abort removes the temporary file; it does nothing after commit.
func (b *badOut) abort() {
	if b != nil {
		b.out.abort()
	}
}
