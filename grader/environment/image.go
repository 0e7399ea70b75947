package environment

import (
	"context"
	"io"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/wrapper"
)

// GraderImageName is the name of grader images; the tag is a content hash.
const GraderImageName = "testfirst-grader"

// imageBuilder is what the grader needs to build its image.
type imageBuilder interface {
	EnsureDebianImage(ctx context.Context, r sandbox.DebianRecipe, progress io.Writer) (string, error)
	EnsureLayer(ctx context.Context, l sandbox.Layer) (ref, id string, err error)
}

// EnsureImage returns the grader image built from base (BaseRecipe's image
// when base is empty) plus the wrapper binary and the pytest plugin,
// building what is missing. Progress goes to progress.
func EnsureImage(ctx context.Context, b imageBuilder, base string, wrapperBinary []byte, progress io.Writer) (ref, id string, err error) {
	if err := wrapper.CheckStatic(wrapperBinary); err != nil {
		return "", "", err
	}
	if base == "" {
		if base, err = b.EnsureDebianImage(ctx, sandbox.PythonRecipe, progress); err != nil {
			return "", "", err
		}
	}
	return b.EnsureLayer(ctx, sandbox.Layer{
		Name: GraderImageName,
		Base: base,
		Files: []sandbox.LayerFile{
			{Path: wrapper.BinaryPath, Mode: 0o755, Data: wrapperBinary},
			{Path: "/usr/lib/python3/dist-packages/" + wrapper.PluginModule + ".py", Mode: 0o644, Data: wrapper.SyspathPlugin},
			{Path: "/usr/lib/python3/dist-packages/" + wrapper.EvidenceModule + ".py", Mode: 0o644, Data: wrapper.EvidencePlugin},
			{Path: "/usr/lib/python3/dist-packages/" + wrapper.SplitModule + ".py", Mode: 0o644, Data: wrapper.SplitPlugin},
			{Path: "/usr/lib/python3/dist-packages/" + wrapper.TreeModule + ".py", Mode: 0o644, Data: wrapper.TreeServer},
		},
		Entrypoint: []string{wrapper.BinaryPath},
	})
}

// Prepared is the environment a grade runs in.
type Prepared struct {
	// Image and ImageID are the grader image built on the environment.
	Image, ImageID string
	// Environment is what the report says of it.
	Environment *report.Environment
	// ProxySocket is the read-only egress proxy's socket, for a mirror
	// grade.
	ProxySocket string
	// Failure, when set, says why the environment could not be built:
	// the grade is an error and runs nothing. FailureOutput, for the
	// requester only, is the build's output.
	Failure       string
	FailureOutput string
}
