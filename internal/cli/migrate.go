package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/index"
)

type indexMigrateOptions struct {
	index indexFlags
}

func (o *indexMigrateOptions) AddFlags(fs *pflag.FlagSet) {
	o.index.AddFlags(fs)
}

func newIndexMigrateCmd(io IO) *cobra.Command {
	o := &indexMigrateOptions{}
	o.index.sketch.Key.Warn = io.Err
	cmd := &cobra.Command{
		Use:   "migrate --data DIR [flags]",
		Short: "Rewrite an index of 4-byte bucket keys with 8-byte keys",
		Long: `migrate rewrites a Pebble index made with 4-byte bucket keys (layout versions
1 and 2: every index made before layout version 3, and every bulk-built one)
as an index of 8-byte keys (layout version 3), from its stored signatures:
the same documents, metadata and configuration, answers unchanged, and no
accidental bucket sharers (a 4-byte key is shared by unrelated documents
about n/2^32 of the time, several per query at 10^9 postings). If the index
had packed postings (bulk-built or repacked), the new one is repacked: a
packed posting takes about 8 bytes with 8-byte keys, 4 with 4-byte keys.
neardup builds before layout version 3 do not open the result.

The new index is written beside DIR (DIR.migrate), made durable, and then
renamed into place (DIR.premigrate holds the old one for a moment). Killed
at any point, migrate leaves the old index in DIR untouched, or a run of
migrate again finishes the switch. The index must not be open elsewhere (a
running neardup serve holds it); it needs free disk for a second copy.
SimHash indexes keep 4-byte keys (their tables' block values fit).`,
		Example: `  neardup index migrate --data idx`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.index.redis != "" || o.index.data == "" {
				return usagef("--data DIR is required (migrate is for Pebble indexes; a Redis index is rebuilt: see docs/operations.md)")
			}
			iopts, err := o.index.options(cmd.Flags())
			if err != nil {
				return err
			}
			return runIndexMigrate(cmd.Context(), io, o, &iopts)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runIndexMigrate(ctx context.Context, stdio IO, o *indexMigrateOptions, iopts *index.Options) error {
	dir := o.index.data
	if err := refusePromoted(dir); err != nil {
		return err
	}
	iopts.Logger = cliLogger(stdio)
	st, err := index.Migrate(ctx, dir, iopts)
	if errors.Is(err, index.ErrKeyWidth) {
		return messageError{fmt.Sprintf("index %s: nothing to migrate: %v", dir, err), err}
	}
	if err != nil {
		return dataError(dir, err)
	}
	if st.Resumed {
		fmt.Fprintf(stdio.Out, "finished the interrupted migration of %s: its bucket keys are %d bytes\n", dir, st.KeyBytes)
		return nil
	}
	packed := ""
	if st.Packed {
		packed = ", postings packed"
	}
	fmt.Fprintf(stdio.Out, "migrated %s: %d documents, bucket keys %d → %d bytes (layout version %d%s)\n",
		dir, st.Documents, st.OldKeyBytes, st.KeyBytes, index.FormatVersion, packed)
	return nil
}
