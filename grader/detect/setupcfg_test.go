package detect

import (
	"slices"
	"testing"
)

func TestSetupCfgValues(t *testing.T) {
	text := "  stray = before any key\n[metadata]\nname: demo\n# comment\n[options]\ninstall_requires =\n    attrs>=20\n    ; a comment inside the list\n    tomli; python_version<\"3.11\"\npackage_dir =\n    =src\nnot a key line\n    orphan continuation\n"
	got := SetupCfgValues(text)
	want := []SetupCfgValue{
		{"metadata", "name", "demo"},
		{"options", "install_requires", "attrs>=20"},
		{"options", "install_requires", `tomli; python_version<"3.11"`},
		{"options", "package_dir", "=src"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("SetupCfgValues:\n got %q\nwant %q", got, want)
	}
}
