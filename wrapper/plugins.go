package wrapper

import _ "embed"

// The pytest plugins of the grader image, installed beside pytest by
// environment.EnsureImage (grader/environment); the wrapper loads them by module name
// (PluginModule, EvidenceModule).
var (
	// SyspathPlugin puts the tree under test on sys.path once every
	// plugin is loaded, and loads the hidden suite's own conftest files.
	//
	//go:embed python/testfirst_syspath.py
	SyspathPlugin []byte

	// EvidencePlugin records what the test process did (the runtime
	// evidence the grade reads).
	//
	//go:embed python/testfirst_evidence.py
	EvidencePlugin []byte
)
