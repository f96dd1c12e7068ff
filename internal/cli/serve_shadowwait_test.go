package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestServeShadowApplyWait: --shadow-apply-wait sets how long a check waits
// for the shadow (server.ShadowOptions.ApplyWait; the server logs what it
// runs with), 5s when not given; out of 1ms..1h, or without --shadow-data,
// it is a usage error.
func TestServeShadowApplyWait(t *testing.T) {
	dir := t.TempDir()
	primary, shadow := filepath.Join(dir, "primary"), filepath.Join(dir, "shadow")
	mustRun(t, "index", "build", "-q", "--data", primary)
	mustRun(t, "index", "build", "-q", "--data", shadow)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shadow-apply-wait", "250ms"}, "apply_wait=250ms"},
		{[]string{"--shadow-apply-wait", "1h"}, "apply_wait=1h0m0s"},
		{nil, "apply_wait=5s"},
	} {
		s := startServe(t, append([]string{"--data", primary, "--shadow-data", shadow}, tc.args...)...)
		if code := s.stop(); code != ExitOK {
			t.Fatalf("serve %q: exit %d:\n%s", tc.args, code, s.logs)
		}
		if logs := s.logs.String(); !strings.Contains(logs, "msg=shadow ") || !strings.Contains(logs, tc.want) {
			t.Errorf("serve %q: log %q; want the shadow's line with %s", tc.args, logs, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--data", primary, "--shadow-data", shadow, "--shadow-apply-wait", "0"}, "--shadow-apply-wait 0s; must be 1ms..1h"},
		{[]string{"--data", primary, "--shadow-data", shadow, "--shadow-apply-wait", "2h"}, "--shadow-apply-wait 2h0m0s; must be 1ms..1h"},
		{[]string{"--data", primary, "--shadow-data", shadow, "--shadow-apply-wait", "-1s"}, "must be 1ms..1h"},
		{[]string{"--data", primary, "--shadow-apply-wait", "10s"}, "--shadow-apply-wait is for a shadow index"},
	} {
		code, _, stderr := runCLI(t, "", append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tc.msg) {
			t.Errorf("serve %q: exit %d, %q; want %d and %q", tc.args, code, stderr, ExitUsage, tc.msg)
		}
	}
}
