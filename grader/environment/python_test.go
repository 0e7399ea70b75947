package environment

import "testing"

// TestChoosePython: the base's requires-python picks among the grader's
// Pythons, the default first; nothing said, or nothing allowed, is the
// default, said so.
func TestChoosePython(t *testing.T) {
	for _, tt := range []struct {
		files     map[string]string
		want, why string
	}{
		{map[string]string{"a.py": ""}, "3.11", ""},
		{map[string]string{"pyproject.toml": "[project]\nname = \"x\"\nrequires-python = \">=3.8\"\n"}, "3.11", `pyproject.toml requires-python ">=3.8"`},
		{map[string]string{"pyproject.toml": "[project]\nrequires-python = \">=3.12\"\n"}, "3.13", `pyproject.toml requires-python ">=3.12"`},
		{map[string]string{"pyproject.toml": "[project]\nrequires-python = \">=3.11.4, <4\"\n"}, "3.13", `pyproject.toml requires-python ">=3.11.4, <4"`},
		{map[string]string{"pyproject.toml": "[project]\nrequires-python = \"~=3.13.0\"\n"}, "3.13", `pyproject.toml requires-python "~=3.13.0"`},
		{map[string]string{"pyproject.toml": "[project]\nrequires-python = \"!=3.11.*,>=3.10\"\n"}, "3.13", `pyproject.toml requires-python "!=3.11.*,>=3.10"`},
		{map[string]string{"setup.cfg": "[options]\npython_requires = >=3.13\n"}, "3.13", `setup.cfg python_requires ">=3.13"`},
		{map[string]string{"pyproject.toml": "[project]\nrequires-python = \">=3.14\"\n"}, "3.11", `pyproject.toml requires-python ">=3.14" allows none of the grader's Pythons (3.11, 3.13): graded with 3.11`},
		{map[string]string{"pyproject.toml": "[project]\nrequires-python = \"python3\"\n"}, "3.11", `pyproject.toml requires-python "python3" does not parse (clause "python3": unknown operator "python"): graded with 3.11`},
		{map[string]string{"pyproject.toml": "[project]\nclassifiers = [\"Programming Language :: Python :: 3\", \"Programming Language :: Python :: 3.12\", \"Programming Language :: Python :: 3.13\"]\n"}, "3.13", "pyproject.toml classifiers name Python 3.12, 3.13"},
		{map[string]string{"setup.cfg": "[metadata]\nclassifiers =\n    Programming Language :: Python :: 3.10\n    Programming Language :: Python :: 3.11\n"}, "3.11", ""},
		{map[string]string{"setup.cfg": "[metadata]\nclassifiers =\n    Programming Language :: Python :: 3.8\n"}, "3.11", "setup.cfg classifiers name Python 3.8, none of the grader's (3.11, 3.13): graded with 3.11"},
	} {
		got, why := ChoosePython(treeOf(t, tt.files))
		if got != tt.want || why != tt.why {
			t.Errorf("%v: %s %q, want %s %q", tt.files, got, why, tt.want, tt.why)
		}
	}
}
