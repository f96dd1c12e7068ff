package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
)

var postingsRE = regexp.MustCompile(`postings (\d+) \((\d+) dropped`)

// TestIndexRepack fills an index online, repacks it with `neardup index
// repack` (progress bar on a terminal), and checks the summary, that `index
// check` finds it consistent with as many postings, that every answer is
// the same, and that a second repack does nothing; then the usage errors.
func TestIndexRepack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	docs := fillOnline(t, dir, index.Options{BucketCap: 1, BucketKeyBytes: index.NarrowKeyBytes}) // repack packs 4-byte keys
	check := func() []string {
		t.Helper()
		code, stdout, stderr := runCLI(t, "", "index", "check", "--data", dir)
		m := postingsRE.FindStringSubmatch(stdout)
		if code != ExitOK || m == nil {
			t.Fatalf("index check: exit %d\n%s%s", code, stdout, stderr)
		}
		return m[1:]
	}
	before := check()
	if before[1] == "0" {
		t.Fatal("no posting dropped at a full bucket")
	}
	want := queryAll(t, dir, docs)

	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"index", "repack", "--data", dir}, IO{In: strings.NewReader(""), Out: &out, Err: &errb, ErrIsTerminal: true})
	if code != ExitOK {
		t.Fatalf("index repack: exit %d\n%s%s", code, out.String(), errb.String())
	}
	t.Logf("%s", out.String())
	for _, re := range []string{
		`^packed ` + before[0] + ` postings of their own into \d+ values \(0 already packed; group bits 0 → 9\) in 1 batches, [\d.]+s \(compaction [\d.]+s\)\n`,
		`\npostings on disk \d+ → \d+ bytes \([\d.]+ → [\d.]+ bytes a posting\)\n`,
		`\nindex .*idx: sstables \d+ → \d+ bytes \(\d+ → \d+ bytes/document\); the write-ahead log and obsolete files take \d+ bytes more until Pebble removes them \(at the latest when the index is next opened\)\n$`,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("summary %q; want it to match %q", out.String(), re)
		}
	}
	if !regexp.MustCompile(`repack +` + before[0] + ` postings .*100%`).MatchString(errb.String()) {
		t.Errorf("progress %q; want the repack stage at 100%% of %s postings", errb.String(), before[0])
	}
	if after := check(); !slices.Equal(after, before) {
		t.Errorf("index check after the repack: %s postings (%s dropped); before %s (%s)", after[0], after[1], before[0], before[1])
	}
	if got := queryAll(t, dir, docs); got != want {
		t.Error("answers differ after the repack")
	}
	// Reopened, the index takes what its sstables take, bar a few KiB.
	_, stdout, _ := runCLI(t, "", "index", "stats", "--data", dir)
	var st struct{ Bytes int64 }
	jsonUnmarshal(t, stdout, &st)
	tables, _ := strconv.ParseInt(regexp.MustCompile(`sstables \d+ → (\d+) bytes`).FindStringSubmatch(out.String())[1], 10, 64)
	if st.Bytes < tables || st.Bytes > tables+64<<10 {
		t.Errorf("index stats after the repack: %d bytes; sstables %d", st.Bytes, tables)
	}

	code, stdout, stderr := runCLI(t, "", "index", "repack", "-q", "--data", dir)
	t.Logf("%s", stdout)
	if code != ExitOK || !strings.HasPrefix(stdout, "nothing to repack: "+before[0]+" postings, all packed (group bits 9)") || stderr != "" {
		t.Errorf("second repack: exit %d\n%s%s", code, stdout, stderr)
	}

	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"index", "repack"}, ExitUsage, "--data DIR is required"},
		{[]string{"index", "repack", "--redis", "127.0.0.1:1"}, ExitUsage, "repack is for Pebble indexes"},
		{[]string{"index", "repack", "--data", dir, "extra"}, ExitUsage, "unknown command"},
		{[]string{"index", "repack", "--data", dir, "--bits", "8"}, ExitFailure, "params"},
		{[]string{"index", "repack", "--data", filepath.Join(dir, "missing")}, ExitFailure, "missing"},
	} {
		code, _, stderr := runCLI(t, "", tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Error("repack of a missing directory made an index")
	}
	code, stdout, _ = runCLI(t, "", "index", "repack", "--help")
	if code != ExitOK || !strings.Contains(stdout, "EXIT STATUS") {
		t.Errorf("help: exit %d, no EXIT STATUS section", code)
	}
}
