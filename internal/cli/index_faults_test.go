package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/index"
)

// envChildArgs, when set, makes the test binary run the neardup command
// line it holds (the arguments as a JSON array) instead of the tests: the
// tests that need a real process to kill or to hold a lock start it so.
const envChildArgs = "NEARDUP_CLI_CHILD_ARGS"

func TestMain(m *testing.M) {
	if env := os.Getenv(envChildArgs); env != "" {
		var args []string
		if err := json.Unmarshal([]byte(env), &args); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		os.Exit(Main(context.Background(), args, StdIO()))
	}
	os.Exit(m.Run())
}

// startChild starts `neardup args...` as a child process with stdin.
func startChild(t *testing.T, stdin io.Reader, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	env, _ := json.Marshal(args)
	cmd.Env = append(os.Environ(), envChildArgs+"="+string(env))
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, &stderr
}

// waitFor polls cond every 10 ms for up to 60 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// dirEntries lists dir ("" if it does not exist).
func dirEntries(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// TestNoIndexAtData: the commands that use an index (index stats, index
// check, index repack, serve) on a --data that holds none say "no index
// at DIR", exit 1 and create nothing (before, stats and check made an
// empty index there and reported success); only index build makes one,
// with or without inputs.
func TestNoIndexAtData(t *testing.T) {
	root := t.TempDir()
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(root, "typo"), empty} {
		for _, args := range [][]string{
			{"index", "stats", "--data", dir},
			{"index", "check", "--data", dir},
			{"index", "repack", "--data", dir},
			{"serve", "--data", dir, "--addr", "127.0.0.1:0"},
		} {
			code, stdout, stderr := runCLI(t, "", args...)
			if code != ExitFailure || !strings.Contains(stderr, "no index at "+dir) || stdout != "" {
				t.Errorf("%s: exit %d, %q %q; want 1 and \"no index at %s\"", strings.Join(args, " "), code, stdout, stderr, dir)
			}
		}
	}
	if got := dirEntries(t, root); got != "empty" {
		t.Errorf("%s holds %q after the commands; want only the empty directory", root, got)
	}
	if got := dirEntries(t, empty); got != "" {
		t.Errorf("the empty directory holds %q after the commands; want nothing", got)
	}
	dir := filepath.Join(root, "made")
	if code, stdout, stderr := runCLI(t, "", "index", "build", "-q", "--data", dir, "--threshold", "0.9"); code != ExitOK || !strings.Contains(stdout, "indexed 0 documents") {
		t.Fatalf("index build without inputs: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr := runCLI(t, "", "index", "stats", "--data", dir)
	var st map[string]any
	if code != ExitOK || json.Unmarshal([]byte(stdout), &st) != nil || st["documents"] != 0.0 || st["threshold"] != 0.9 {
		t.Errorf("stats of the empty index: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestIndexLocked: a second process on an index that neardup serve holds
// is told so ("locked by another process (is neardup serve running?)"),
// not "resource temporarily unavailable".
func TestIndexLocked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	if code, _, stderr := runCLI(t, "", "index", "build", "-q", "--data", dir); code != ExitOK {
		t.Fatal(stderr)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, serveErr := startChild(t, nil, "serve", "--data", dir, "--addr", addr)
	waitFor(t, "the server", func() bool {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	for _, args := range [][]string{{"index", "stats", "--data", dir}, {"index", "check", "--data", dir}, {"index", "repack", "--data", dir}, {"index", "build", "--data", dir}} {
		code, _, stderr := runCLI(t, "", args...)
		want := fmt.Sprintf("index %s is locked by another process (is neardup serve running?)", dir)
		if code != ExitFailure || !strings.Contains(stderr, want) || strings.Contains(stderr, "temporarily unavailable") {
			t.Errorf("%s: exit %d, %q; want 1 and %q\n(serve: %s)", strings.Join(args, " "), code, stderr, want, serveErr)
		}
	}
}

// TestIndexBuildKilled kills `neardup index build` with SIGKILL in the
// middle of a build: serve, index stats and index check then refuse the
// index with a message saying to build it again (before, they took it as a
// valid empty index), and the next build into the same directory succeeds
// and removes the temporary files the killed one left in build.tmp.
func TestIndexBuildKilled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	// The build reads standard input, which the test keeps open: it is
	// killed while it waits for more, its tables and runs half written.
	pr, pw := io.Pipe()
	cmd, stderr := startChild(t, pr, "index", "build", "-q", "--data", dir, "--memory", "16MiB", "-")
	go func() {
		for i := 0; ; i++ { // the sample again and again, with new ids
			chunk := bytes.ReplaceAll(data, []byte(`{"id": "`), fmt.Appendf(nil, `{"id": "r%d-`, i))
			if _, err := pw.Write(chunk); err != nil {
				return
			}
			if i == 5 {
				return // then hold: the build waits for more input
			}
		}
	}()
	tmp := filepath.Join(dir, "build.tmp")
	waitFor(t, "the build's temporary tables", func() bool {
		ssts, _ := filepath.Glob(filepath.Join(tmp, "build-*", "sigs-*.sst"))
		for _, p := range ssts {
			if st, err := os.Stat(p); err == nil && st.Size() > 0 {
				return true
			}
		}
		return false
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	pw.Close()
	left, _ := filepath.Glob(filepath.Join(tmp, "build-*", "*"))
	if len(left) == 0 {
		t.Fatalf("the killed build left no temporary file; nothing to test\n%s", stderr)
	}

	for _, args := range [][]string{
		{"index", "stats", "--data", dir},
		{"index", "check", "--data", dir},
		{"serve", "--data", dir, "--addr", "127.0.0.1:0"},
	} {
		code, stdout, stderr := runCLI(t, "", args...)
		if code != ExitFailure || !strings.Contains(stderr, "build did not finish") || !strings.Contains(stderr, "build it again") || stdout != "" {
			t.Errorf("%s on a killed build: exit %d, %q %q; want 1 and a message to build it again", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	code, stdout, errOut := runCLI(t, "", "index", "build", "-q", "--data", dir, sample)
	if code != ExitOK || !strings.Contains(stdout, "indexed 1000 documents") {
		t.Fatalf("building again: exit %d\n%s%s", code, stdout, errOut)
	}
	if got := dirEntries(t, tmp); got != "" {
		t.Errorf("build.tmp holds %q after the next build; want it gone", got)
	}
	if code, stdout, _ := runCLI(t, "", "index", "check", "--data", dir); code != ExitOK || !strings.Contains(stdout, "documents 1000") {
		t.Errorf("index check after building again: exit %d\n%s", code, stdout)
	}
}

// TestIndexBuildDuplicateID: a repeated id fails the build naming the file
// and line of both occurrences (before: the id only), and leaves no index
// where there was none.
func TestIndexBuildDuplicateID(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "in.jsonl")
	var b strings.Builder
	for i, id := range []string{"t1", "t2", "t3", "t4", "t5", "t6", "t3", "t7"} {
		fmt.Fprintf(&b, `{"id": %q, "text": "document number %d has some words of its own, %d"}`+"\n", id, i, i*i)
		if i == 2 {
			b.WriteString("\n") // blank lines count
		}
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "idx")
	code, _, stderr := runCLI(t, "", "index", "build", "-q", "--data", dir, in)
	want := fmt.Sprintf(`%s:8: dupid: duplicate id "t3", first at %s:3`, in, in)
	if code != ExitFailure || !strings.Contains(stderr, want) {
		t.Errorf("build with t3 twice: exit %d, %q; want 1 and %q", code, stderr, want)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the failed build left %s (%v); want no index where there was none", dir, err)
	}
	// Standard input is named by its lines too: the check needs no second read.
	code, _, stderr = runCLI(t, b.String(), "index", "build", "-q", "--data", dir, "-")
	if code != ExitFailure || !strings.Contains(stderr, `<stdin>:8: dupid: duplicate id "t3", first at <stdin>:3`) {
		t.Errorf("build from stdin with t3 twice: exit %d, %q", code, stderr)
	}
}

// TestIndexCheckDamaged: index check of an index with a damaged block
// reports it in a few lines and exits 1 (before: a 67-line dump from
// Pebble's fatal error).
func TestIndexCheckDamaged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	if code, _, stderr := runCLI(t, "", "index", "build", "-q", "--data", dir, sample); code != ExitOK {
		t.Fatal(stderr)
	}
	ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	var largest string
	var size int64
	for _, p := range ssts {
		if st, err := os.Stat(p); err == nil && st.Size() > size {
			largest, size = p, st.Size()
		}
	}
	f, err := os.OpenFile(largest, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	f.ReadAt(buf, size/2)
	for i := range buf {
		buf[i] ^= 0xff
	}
	f.WriteAt(buf, size/2)
	f.Close()
	code, stdout, stderr := runCLI(t, "", "index", "check", "--data", dir)
	out := strings.TrimSpace(stdout + stderr)
	if code != ExitFailure || !strings.Contains(out, "corrupt") || !strings.Contains(out, filepath.Base(largest)) || strings.Count(out, "\n") > 3 {
		t.Errorf("index check of a damaged index: exit %d, %d lines:\n%s\nwant 1 and a few lines naming %s", code, strings.Count(out, "\n")+1, out, filepath.Base(largest))
	}
	x, err := index.Open(dir, &index.Options{MustExist: true})
	if err != nil {
		t.Fatalf("the damaged index no longer opens: %v", err)
	}
	x.Close()

	// serve --preload meets the damage while preloading: it serves anyway,
	// /readyz saying 503.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan int, 1)
	serveErr := &syncBuffer{}
	go func() {
		served <- Main(ctx, []string{"serve", "--data", dir, "--addr", addr, "--preload"}, IO{Out: io.Discard, Err: serveErr})
	}()
	var ready int
	var body []byte
	waitFor(t, "the server", func() bool {
		select {
		case code := <-served:
			t.Fatalf("serve --preload of a damaged index exited %d:\n%s", code, serveErr)
		default:
		}
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		ready = resp.StatusCode
		body, _ = io.ReadAll(resp.Body)
		return true
	})
	if ready != http.StatusServiceUnavailable || !bytes.Contains(body, []byte("corrupt")) {
		t.Errorf("/readyz of a damaged index: %d %s; want 503 naming the corruption", ready, body)
	}
	cancel()
	if code := <-served; code != ExitOK {
		t.Errorf("serve: exit %d\n%s", code, serveErr)
	}
}
