package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckOutputs: an output is refused when it is the same file on disk
// as another output or as a file read, however the two paths name it:
// the same path written otherwise, a symlink to it, a hard link, a
// directory reached through a symlink, a dangling symlink to where
// another output goes. Devices are written as streams and clobber
// nothing.
func TestCheckOutputs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile("profile.yaml", []byte("duration: 1s\n"), 0o644))
	must(os.Symlink("profile.yaml", "link.yaml"))
	must(os.Link("profile.yaml", "hard.yaml"))
	must(os.Mkdir("out", 0o755))
	must(os.Symlink("out", "outlink"))
	must(os.Symlink("later.csv", "dangling.csv"))
	must(os.Symlink(filepath.Join(dir, "loop-a"), "loop-b"))
	must(os.Symlink(filepath.Join(dir, "loop-b"), "loop-a"))
	profile := []namedFile{{"the profile", "profile.yaml"}}
	for _, tc := range []struct {
		name   string
		writes []namedFile
		reads  []namedFile
		want   []string // each problem, in order; none: accepted
	}{
		{"different files", []namedFile{{"--trace", "t.csv"}, {"--summary", "s.json"}}, profile, nil},
		{"not asked for", []namedFile{{"--trace", ""}, {"--summary", ""}}, profile, nil},
		{"two outputs, one file", []namedFile{{"--trace", "same.out"}, {"--summary", "same.out"}}, profile,
			[]string{"--trace same.out and --summary same.out are the same file: give each output a file of its own"}},
		{"the same path written otherwise", []namedFile{{"--trace", "out/x.csv"}, {"--queues", "./out/../out/x.csv"}}, nil,
			[]string{"--trace out/x.csv and --queues ./out/../out/x.csv are the same file"}},
		{"through a symlinked directory", []namedFile{{"--trace", "out/x.csv"}, {"--queues", "outlink/x.csv"}}, nil,
			[]string{"--trace out/x.csv and --queues outlink/x.csv are the same file"}},
		{"a directory not there yet", []namedFile{{"--report", "new/dir/index.html"}, {"--junit", filepath.Join(dir, "new/dir/index.html")}}, nil,
			[]string{"--report new/dir/index.html and --junit " + filepath.Join(dir, "new/dir/index.html") + " are the same file"}},
		{"a dangling symlink", []namedFile{{"--trace", "dangling.csv"}, {"--queues", "later.csv"}}, nil,
			[]string{"--trace dangling.csv and --queues later.csv are the same file"}},
		{"the profile", []namedFile{{"--trace", "profile.yaml"}}, profile,
			[]string{"--trace profile.yaml would overwrite profile.yaml, the profile: an output may not be a file the command reads"}},
		{"a symlink to the profile", []namedFile{{"--trace", "link.yaml"}}, profile,
			[]string{"--trace link.yaml would overwrite profile.yaml, the profile"}},
		{"a hard link to the profile", []namedFile{{"--trace", "hard.yaml"}}, profile,
			[]string{"--trace hard.yaml would overwrite profile.yaml, the profile"}},
		{"every problem", []namedFile{{"--trace", "hard.yaml"}, {"--summary", "link.yaml"}, {"--queues", "q.csv"}}, profile,
			[]string{"--trace hard.yaml would overwrite profile.yaml", "--summary link.yaml would overwrite profile.yaml", "--trace hard.yaml and --summary link.yaml are the same file"}},
		{"devices are streams", []namedFile{{"--trace", os.DevNull}, {"--summary", os.DevNull}}, nil, nil},
		{"a loop of symlinks", []namedFile{{"--trace", "loop-a"}, {"--queues", "q.csv"}}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkOutputs(tc.writes, tc.reads)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want %q", tc.want)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("problems:\n%s\nwant %d", err, len(tc.want))
			}
			for i, want := range tc.want {
				if !strings.HasPrefix(lines[i], want) {
					t.Errorf("problem %d: %q, want %q…", i, lines[i], want)
				}
			}
		})
	}
}
