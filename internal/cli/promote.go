package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/atomicfile"
	"github.com/neardup/neardup/server"
)

// promotedName is the marker that index promote leaves in the old primary's
// directory: serve refuses to serve it again.
const promotedName = "NEARDUP-PROMOTED"

// promotedMarker is the marker's content.
type promotedMarker struct {
	// Shadow is the absolute path of the index that replaced this one.
	Shadow string `json:"shadow"`
	// Time is when it was promoted (RFC 3339, UTC).
	Time string `json:"time"`
}

// readPromoted returns the marker in dir, if any.
func readPromoted(dir string) (promotedMarker, bool, error) {
	var m promotedMarker
	b, err := os.ReadFile(filepath.Join(dir, promotedName))
	if errors.Is(err, fs.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Shadow == "" {
		return m, false, fmt.Errorf("%s: not a promotion marker (%v)", filepath.Join(dir, promotedName), err)
	}
	return m, true, nil
}

// refusePromoted fails if the index in dir was replaced by index promote.
func refusePromoted(dir string) error {
	m, ok, err := readPromoted(dir)
	if err != nil || !ok {
		return err
	}
	return fmt.Errorf("index %s was replaced on %s by promoting the shadow %s (neardup index promote): serve --data %s; %s is kept only to roll back (remove %s to serve it again)",
		dir, m.Time, m.Shadow, m.Shadow, dir, filepath.Join(dir, promotedName))
}

type indexPromoteOptions struct {
	data, shadow           string
	cacheSize              string
	keyFile, shadowKeyFile string
}

func (o *indexPromoteOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.data, "data", "", "the primary index directory (Pebble) that serve --data answered from")
	fs.StringVar(&o.shadow, "shadow-data", "", "the shadow index directory that serve --shadow-data kept up to date")
	fs.StringVar(&o.keyFile, "key-file", "", "the key of the primary, if made under a keyed spec")
	fs.StringVar(&o.shadowKeyFile, "shadow-key-file", "", "the key of the shadow, if made under a keyed spec (serve's --shadow-key-file)")
}

func newIndexPromoteCmd(io IO) *cobra.Command {
	o := &indexPromoteOptions{}
	cmd := &cobra.Command{
		Use:   "promote --data DIR --shadow-data SHADOW",
		Short: "Make the shadow index the primary, with every acknowledged write",
		Long: `promote switches a shadow index (neardup serve --shadow-data) in for the primary,
once it has been compared long enough (GET /v1/shadow, neardup_shadow_*):

 1. stop the server (SIGTERM; or it died: a kill -9 loses nothing either);
 2. neardup index promote --data DIR --shadow-data SHADOW;
 3. start it again with --data SHADOW (and no --shadow-data, or a new one).

The server journals every write it acknowledges for the shadow (synced before
the answer) and applies the journal in the background; promote applies what
is left of it, so the shadow holds every acknowledged insert and delete, then
marks DIR as replaced: serve refuses it from then on, naming SHADOW. DIR is
left as it was, to roll back (remove its NEARDUP-PROMOTED marker).
promote is safe to run again: killed at any point, the next run finishes the
work and the result is the same. Both indexes must be closed (Pebble locks
them; a running serve holds them).`,
		Example: `  neardup index promote --data idx --shadow-data idx-b32`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.data == "" || o.shadow == "" {
				return usagef("--data DIR and --shadow-data SHADOW are required")
			}
			return runIndexPromote(cmd.Context(), io, o)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runIndexPromote(ctx context.Context, stdio IO, o *indexPromoteOptions) error {
	shadowAbs, err := filepath.Abs(o.shadow)
	if err != nil {
		return err
	}
	dataAbs, err := filepath.Abs(o.data)
	if err != nil {
		return err
	}
	if dataAbs == shadowAbs {
		return usagef("--data and --shadow-data name the same directory %s", dataAbs)
	}
	m, promoted, err := readPromoted(o.data)
	if err != nil {
		return err
	}
	if promoted && m.Shadow != shadowAbs {
		return fmt.Errorf("index %s was already replaced by %s, not %s", o.data, m.Shadow, shadowAbs)
	}
	key, err := readKeyFlag("key-file", o.keyFile)
	if err != nil {
		return err
	}
	shadowKey, err := readKeyFlag("shadow-key-file", o.shadowKeyFile)
	if err != nil {
		return err
	}
	opts := index.Options{MustExist: true, CacheSize: 16 << 20, Logger: cliLogger(stdio), Key: key}
	// Hold the primary's lock: no server answers from it while it is
	// marked.
	primary, err := openData(o.data, &opts)
	if err != nil {
		return err
	}
	defer primary.Close()
	opts.Key = shadowKey
	shadow, err := openData(o.shadow, &opts)
	if err != nil {
		return err
	}
	defer shadow.Close()
	journal := server.JournalPath(o.shadow)
	if promoted {
		// A run killed after the marker: the journal was applied before
		// the marker was written, and the shadow may have been served
		// (and written) since; applying the journal again could undo a
		// delete. Only remove it.
		if err := os.Remove(journal); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		fmt.Fprintf(stdio.Out, "%s was already promoted on %s: serve --data %s\n", o.shadow, m.Time, o.shadow)
		return nil
	}
	st, err := server.ReplayShadowJournal(ctx, shadow, journal)
	if err != nil {
		return fmt.Errorf("applying the shadow journal %s: %w", journal, err)
	}
	if err := shadow.Close(); err != nil {
		return err
	}
	// The marker is the commit point: written (and its directory synced)
	// only once the shadow holds the whole journal durably.
	f, err := atomicfile.Create(filepath.Join(o.data, promotedName))
	if err != nil {
		return err
	}
	b, _ := json.Marshal(promotedMarker{Shadow: shadowAbs, Time: time.Now().UTC().Format(time.RFC3339)})
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Abort()
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	if err := atomicfile.SyncDir(o.data); err != nil {
		return err
	}
	if err := os.Remove(journal); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	fmt.Fprintf(stdio.Out, "applied the shadow journal (%d bytes: %d inserts, %d deletes); %s is now the primary: serve --data %s\n",
		st.Bytes, st.Inserts, st.Deletes, o.shadow, o.shadow)
	return primary.Close()
}
