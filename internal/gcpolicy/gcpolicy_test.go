package gcpolicy

import (
	"errors"
	"strings"
	"testing"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestCLI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  func(string) string
		want Settings
	}{
		{"defaults", env(), Settings{Percent: 50, Limit: -1, StartHeap: CLIStartHeap}},
		{"the user's GOGC is left alone", env("GOGC", "200"), Settings{Percent: -1, Limit: -1}},
		{"the user's GOMEMLIMIT: no start, which would replace it", env("GOMEMLIMIT", "1GiB"), Settings{Percent: 50, Limit: -1}},
	} {
		if got := CLI(tc.env); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestServer(t *testing.T) {
	t.Parallel()
	const gib = 1 << 30
	for _, tc := range []struct {
		name      string
		env       func(string) string
		flag      string
		container int64
		want      Settings
	}{
		{"container limit", env(), "auto", gib, Settings{Percent: 400, Limit: 751619276}},
		{"no container limit", env(), "", 0, Settings{Percent: 400, Limit: DefaultLimit}},
		{"flag size", env(), "768MiB", gib, Settings{Percent: 400, Limit: 768 << 20}},
		{"flag bytes", env(), "1000000", 0, Settings{Percent: 400, Limit: 1000000}},
		{"flag off", env(), "off", gib, Settings{Percent: 400, Limit: 0}},
		{"user GOMEMLIMIT wins over the flag", env("GOMEMLIMIT", "2GiB"), "768MiB", gib, Settings{Percent: 400, Limit: -1}},
		{"user GOGC: no limit unless asked", env("GOGC", "100"), "auto", gib, Settings{Percent: -1, Limit: -1}},
		{"user GOGC and the flag", env("GOGC", "100"), "2GiB", 0, Settings{Percent: -1, Limit: 2 * gib}},
		{"user GOGC and GOMEMLIMIT", env("GOGC", "off", "GOMEMLIMIT", "1GiB"), "2GiB", gib, Settings{Percent: -1, Limit: -1}},
	} {
		got, err := Server(tc.env, tc.flag, tc.container)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	for _, bad := range []string{"1G", "-5MiB", "lots", "MiB", "99999999999TiB"} {
		if _, err := Server(env(), bad, 0); err == nil || !strings.Contains(err.Error(), "--memory-limit") {
			t.Errorf("--memory-limit %q: got %v, want an error naming the flag", bad, err)
		}
	}
}

func TestContainerLimit(t *testing.T) {
	t.Parallel()
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if v, ok := m[p]; ok {
				return []byte(v), nil
			}
			return nil, errors.New("no such file")
		}
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"v2", map[string]string{"/sys/fs/cgroup/memory.max": "536870912\n"}, 512 << 20},
		{"v2 unlimited", map[string]string{"/sys/fs/cgroup/memory.max": "max\n"}, 0},
		{"v1", map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824\n"}, 1 << 30},
		{"v1 unlimited", map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, 0},
		{"none", nil, 0},
	} {
		if got := containerLimit(files(tc.files)); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
}
