package cli

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/server"
)

// freeAddr returns a free local TCP address.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// ackLog records what the server acknowledged: inserts answered "new",
// deletes answered 204, and the ids whose delete was sent but not answered
// (either outcome is allowed for them).
type ackLog struct {
	mu        sync.Mutex
	inserted  map[string]bool
	deleted   map[string]bool
	uncertain map[string]bool
}

// promoteLoad inserts new documents (and deletes every fifth one it stored)
// until ctx ends or the server stops answering.
func promoteLoad(ctx context.Context, c *server.Client, log *ackLog, worker int) {
	rng := rand.New(rand.NewPCG(uint64(worker), 99))
	word := func() string {
		b := make([]byte, 4+rng.IntN(5))
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	for i := 0; ctx.Err() == nil; i++ {
		id := fmt.Sprintf("load-%d-%d", worker, i)
		ws := make([]string, 40)
		for j := range ws {
			ws[j] = word()
		}
		res, err := c.Insert(ctx, server.Document{ID: id, Text: strings.Join(ws, " ")}, server.Query{})
		if err != nil {
			return
		}
		if res.Status != server.StatusNew {
			continue
		}
		log.mu.Lock()
		log.inserted[id] = true
		log.mu.Unlock()
		if i%5 == 4 {
			log.mu.Lock()
			log.uncertain[id] = true
			log.mu.Unlock()
			if err := c.Delete(ctx, id); err != nil {
				return
			}
			log.mu.Lock()
			delete(log.uncertain, id)
			delete(log.inserted, id)
			log.deleted[id] = true
			log.mu.Unlock()
		}
	}
}

// TestPromoteUnderLoadKilled serves a primary with a shadow of other bands
// under a load of inserts and deletes, kills the server (SIGKILL) in the
// middle of it, then runs neardup index promote and kills it (SIGKILL) again
// and again, each time a little later, until one run finishes: the promoted
// shadow holds every insert the server acknowledged and none it
// acknowledged deleting, passes index check, and serve refuses the old
// primary, naming the new one.
func TestPromoteUnderLoadKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two indexes and kills processes")
	}
	root := t.TempDir()
	data, shadow := filepath.Join(root, "primary"), filepath.Join(root, "shadow")
	if code, out, errOut := runCLI(t, "", "index", "build", "-q", "--data", data, sample); code != ExitOK {
		t.Fatalf("index build: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, "", "index", "build", "-q", "--data", shadow, "--bands", "32", "--rows", "4", sample); code != ExitOK {
		t.Fatalf("index build of the shadow: exit %d\n%s%s", code, out, errOut)
	}

	addr := freeAddr(t)
	srv, srvErr := startChild(t, nil, "serve", "--data", data, "--shadow-data", shadow, "--addr", addr)
	c := server.NewClient("http://"+addr, "", nil)
	waitFor(t, "the server", func() bool {
		return c.Ready(context.Background()) == nil
	})
	resp, err := http.Get("http://" + addr + "/v1/shadow")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/shadow: %v %v", resp, err)
	}
	resp.Body.Close()

	log := &ackLog{inserted: map[string]bool{}, deleted: map[string]bool{}, uncertain: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() { promoteLoad(ctx, c, log, w) })
	}
	waitFor(t, "acknowledged writes", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return len(log.inserted) >= 150 && len(log.deleted) >= 20
	})
	if err := srv.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.Wait()
	wg.Wait() // the load stops at the first unanswered request
	cancel()
	t.Logf("server killed with %d inserts and %d deletes acknowledged; journal %d bytes", len(log.inserted), len(log.deleted), fileSize(server.JournalPath(shadow)))
	_ = srvErr

	kills := 0
	for delay := 5 * time.Millisecond; ; delay = delay * 3 / 2 {
		p, pErr := startChild(t, nil, "index", "promote", "--data", data, "--shadow-data", shadow)
		done := make(chan error, 1)
		go func() { done <- p.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("promote: %v\n%s", err, pErr)
			}
		case <-time.After(delay):
			p.Process.Signal(syscall.SIGKILL)
			if err := <-done; err == nil {
				break // it finished first
			}
			kills++
			continue
		}
		break
	}
	t.Logf("promote killed %d times before a run finished", kills)
	if kills == 0 {
		t.Errorf("promote was never killed; the test did not test a kill")
	}

	code, _, errOut := runCLI(t, "", "serve", "--data", data, "--addr", freeAddr(t))
	if code != ExitFailure || !strings.Contains(errOut, "neardup index promote") || !strings.Contains(errOut, shadow) {
		t.Errorf("serve of the replaced primary: exit %d, %q; want 1 naming the shadow", code, errOut)
	}
	if _, err := os.Stat(server.JournalPath(shadow)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the journal is left after promote: %v", err)
	}
	if code, out, errOut := runCLI(t, "", "index", "check", "--data", shadow); code != ExitOK {
		t.Errorf("index check of the promoted shadow: exit %d\n%s%s", code, out, errOut)
	}
	db, err := index.Open(shadow, &index.Options{MustExist: true, CacheSize: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var missing, resurrected int
	for id := range log.inserted {
		if log.uncertain[id] {
			continue
		}
		if _, err := db.Get(context.Background(), id); err != nil {
			missing++
			if missing <= 5 {
				t.Errorf("acknowledged insert %s is not in the promoted index: %v", id, err)
			}
		}
	}
	for id := range log.deleted {
		if _, err := db.Get(context.Background(), id); !errors.Is(err, index.ErrNotFound) {
			resurrected++
			if resurrected <= 5 {
				t.Errorf("acknowledged delete %s is in the promoted index: %v", id, err)
			}
		}
	}
	if missing+resurrected > 0 {
		t.Errorf("%d acknowledged inserts missing, %d acknowledged deletes undone", missing, resurrected)
	}
	if st, _ := db.Stats(context.Background()); st.Documents < int64(1000+len(log.inserted)-len(log.uncertain)) {
		t.Errorf("the promoted index holds %d documents; want at least the 1000 built and %d inserted", st.Documents, len(log.inserted)-len(log.uncertain))
	}
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return st.Size()
}

// TestPromoteUsage: the flags promote and serve --shadow-data need, and a
// promote of indexes that do not exist.
func TestPromoteUsage(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"index", "promote", "--data", dir}, ExitUsage, "--shadow-data SHADOW are required"},
		{[]string{"index", "promote", "--data", dir, "--shadow-data", dir + "/"}, ExitUsage, "the same directory"},
		{[]string{"index", "promote", "--data", dir + "/a", "--shadow-data", dir + "/b"}, ExitFailure, "no index at"},
		{[]string{"serve", "--redis", "127.0.0.1:1", "--shadow-data", dir}, ExitUsage, "--shadow-data is for a Pebble primary"},
		{[]string{"serve", "--data", dir, "--shadow-data", dir + "/b", "--shadow-queue", "0"}, ExitUsage, "--shadow-queue 0"},
	} {
		code, _, stderr := runCLI(t, "", c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%s: exit %d, %q; want %d and %q", strings.Join(c.args, " "), code, stderr, c.code, c.msg)
		}
	}
}
