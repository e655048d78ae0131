package benchfile

import (
	"os"
	"path/filepath"

	"github.com/hilrig/hilrig/profiles/lang"
)

// ReplayEndpoint plays a bench endpoint from a recording of an earlier
// run, so that a suite can run yesterday's bench session against another
// profile with no hardware: the frames the recorded endpoint's device sent
// go into the network at the times they entered the rig then.
type ReplayEndpoint struct {
	File     string  `yaml:"file,required" doc:"a recording of an earlier run (pcapng, from hilrig run --record FILE), relative to the bench"`
	Endpoint *string `yaml:"endpoint" doc:"the endpoint of the recording whose device's frames to send" default:"this endpoint's name"`

	path, name string // the file resolved, and the recorded endpoint
}

func (ReplayEndpoint) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a recording to replay", Example: "{file: session.pcapng, endpoint: controller}"}
}

// Path is the recording's file, resolved against the bench's directory.
func (r *ReplayEndpoint) Path() string { return r.path }

// Recorded is the recording's endpoint that is replayed.
func (r *ReplayEndpoint) Recorded() string { return r.name }

// check resolves the file, which must be there to read.
func (r *ReplayEndpoint) check(d *lang.Decoder, path, benchSource, endpoint string) {
	r.path, r.name = r.File, endpoint
	if !filepath.IsAbs(r.path) && benchSource != "" {
		r.path = filepath.Join(filepath.Dir(benchSource), r.path)
	}
	if r.Endpoint != nil {
		r.name = *r.Endpoint
	}
	// What the run will read: a regular file, not too large to hold.
	if err := lang.CheckFile(r.path, lang.MaxFileBytes, os.Stat); err != nil {
		d.ErrorAt(path+".file", "cannot read the recording: %v", err)
	}
}
