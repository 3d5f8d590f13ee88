package main

import (
	"io/fs"
	"testing"
)

// TestMemoryLimit: the soft limit is 90% of a container's limit (cgroup v2
// or v1), else half the machine's RAM, and nothing when GOMEMLIMIT is set
// or nothing can be read.
func TestMemoryLimit(t *testing.T) {
	const meminfo = "MemTotal:        8000000 kB\nMemFree:         1000 kB\n"
	for _, tt := range []struct {
		name  string
		env   map[string]string
		files map[string]string
		want  int64
		from  string
	}{
		{"cgroup v2", nil, map[string]string{"/sys/fs/cgroup/memory.max": "1073741824\n", "/proc/meminfo": meminfo}, 966367641, "/sys/fs/cgroup/memory.max"},
		{"cgroup v2 without a limit", nil, map[string]string{"/sys/fs/cgroup/memory.max": "max\n", "/proc/meminfo": meminfo}, 4096000000, "/proc/meminfo"},
		{"cgroup v1", nil, map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "536870912\n", "/proc/meminfo": meminfo}, 483183820, "/sys/fs/cgroup/memory/memory.limit_in_bytes"},
		{"cgroup v1 unlimited", nil, map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n", "/proc/meminfo": meminfo}, 4096000000, "/proc/meminfo"},
		{"no cgroup", nil, map[string]string{"/proc/meminfo": meminfo}, 4096000000, "/proc/meminfo"},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "300MiB"}, map[string]string{"/sys/fs/cgroup/memory.max": "1073741824\n"}, 0, "GOMEMLIMIT"},
		{"garbage", nil, map[string]string{"/sys/fs/cgroup/memory.max": "lots\n", "/proc/meminfo": "MemTotal: many\n"}, 0, ""},
		{"nothing to read", nil, nil, 0, ""},
	} {
		env := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
		read := func(name string) ([]byte, error) {
			if s, ok := tt.files[name]; ok {
				return []byte(s), nil
			}
			return nil, fs.ErrNotExist
		}
		got, from := memoryLimit(env, read)
		if got != tt.want || from != tt.from {
			t.Errorf("%s: memoryLimit = %d from %q, want %d from %q", tt.name, got, from, tt.want, tt.from)
		}
	}
}
