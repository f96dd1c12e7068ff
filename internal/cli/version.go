package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

func newVersionCmd(io IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the Go version and the data format versions",
		Long: `version prints neardup's release, the module version and commit it was built
from (when the build recorded them), the Go version, and the versions of the
formats whose files must match: the shingle spec (features), the signature
wire format and the index layout. neardup --version prints the same.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := io.Out.Write([]byte(versionText()))
			return err
		},
	}
}

// versionText is what version and --version print.
func versionText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "neardup %s\n", dedup.Version)
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(&b, "module %s %s\n", bi.Main.Path, bi.Main.Version)
		writeVCS(&b, bi.Settings)
	}
	fmt.Fprintf(&b, "go %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "shingle spec v%d (Unicode %s)\n", shingle.Version, shingle.UnicodeVersion)
	fmt.Fprintf(&b, "signature format v%d\n", minhash.FormatVersion)
	fmt.Fprintf(&b, "index format v%d\n", index.FormatVersion)
	return b.String()
}

// writeVCS writes the commit line from the build settings, if recorded.
func writeVCS(w io.Writer, settings []debug.BuildSetting) {
	var rev, at, modified string
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = " (modified)"
			}
		}
	}
	if rev != "" {
		fmt.Fprintf(w, "commit %s %s%s\n", rev, at, modified)
	}
}

// refuseUnknownSubcommands makes every command that only groups
// subcommands (the root, eval, index) refuse an unknown subcommand as a
// usage error (exit 2) rather than print help and succeed (eval nosuch) or
// fail with exit 1 (neardup nosuch); without arguments it prints its help.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf("; did you mean %q?", s[0])
		}
		return usageError{fmt.Errorf("%s", msg)}
	}
	c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
}
