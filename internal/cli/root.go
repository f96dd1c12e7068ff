// Package cli implements the neardup command: one root constructor, one file
// per subcommand (an options struct, its flags, validation and run), and the
// mapping of errors to exit codes in one place. I/O is injected so tests drive
// the commands as a user would.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/neardup/neardup/dedup"
)

// Exit codes.
const (
	ExitOK          = 0   // success
	ExitFailure     = 1   // the work failed: bad input data, I/O error
	ExitUsage       = 2   // bad flags or arguments
	ExitInterrupted = 130 // interrupted (SIGINT)
)

// IO is the command's standard streams.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
	// ErrIsTerminal reports whether Err is a terminal (for progress bars).
	ErrIsTerminal bool
}

// StdIO returns the process's standard streams.
func StdIO() IO {
	return IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, ErrIsTerminal: term.IsTerminal(int(os.Stderr.Fd()))}
}

// usageError marks errors that are the caller's: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

const exitStatusHelp = `
EXIT STATUS
  0    success
  1    the work failed (bad input data, I/O errors); the message names the file and line
  2    bad flags or arguments
  130  interrupted
`

// NewRoot returns the root command with every subcommand.
func NewRoot(io IO) *cobra.Command {
	root := &cobra.Command{
		Use:   "neardup",
		Short: "Find near-duplicate documents with MinHash and LSH",
		Long: `neardup finds near-duplicate documents in text corpora with MinHash signatures,
LSH banding and exact verification, and keeps one document per cluster.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newDedupCmd(io), newSignCmd(io), newEvalCmd(io), newPlanCmd(io), newServeCmd(io), newIndexCmd(io), newQueryCmd(io), newCheckCmd(io))
	root.AddCommand(newTuneCmd(io), newBoilerplateCmd(io))
	root.AddCommand(newVersionCmd(io))
	root.Version = dedup.Version // --version, printed by the template below
	root.SetVersionTemplate(versionText())
	refuseUnknownSubcommands(root)
	for _, c := range root.Commands() {
		c.SetUsageTemplate(c.UsageTemplate() + exitStatusHelp)
		c.Args = wrapArgs(c.Args)
	}
	root.SetUsageTemplate(root.UsageTemplate() + exitStatusHelp)
	return root
}

// wrapArgs turns argument-count errors into usage errors.
func wrapArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	if check == nil {
		return nil
	}
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// Main runs the command line args and returns the exit code.
func Main(ctx context.Context, args []string, io IO) int {
	root := NewRoot(io)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return exitCode(io, err)
}

func exitCode(io IO, err error) int {
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(io.Err, "neardup:", describe(err))
	var u usageError
	switch {
	case errors.As(err, &u):
		return ExitUsage
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	return ExitFailure
}
