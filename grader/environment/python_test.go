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
		// A pytest pin the default's pytest (7.2.1) does not meet moves
		// the grade to 3.13 (8.3.5), when the base allows it.
		{map[string]string{"requirements-test.txt": "pytest>=8\n"}, "3.13",
			"the base's declarations ask for pytest>=8, which Python 3.13's pytest 8.3.5 meets and Python 3.11's pytest 7.2.1 does not"},
		{map[string]string{"pyproject.toml": "[project]\nrequires-python = \">=3.9\"\n[dependency-groups]\ntest = [\"pytest[testing] (>=7.4,<9); python_version >= '3.9'\", \"pytest-cov\"]\n"}, "3.13",
			"the base's declarations ask for pytest[testing] (>=7.4,<9); python_version >= '3.9', which Python 3.13's pytest 8.3.5 meets and Python 3.11's pytest 7.2.1 does not"},
		// Met by the default's pytest, unparsable, or any pytest: no move.
		{map[string]string{"requirements-test.txt": "pytest>=7.0\n"}, "3.11", ""},
		{map[string]string{"requirements-test.txt": "pytest>=eight\n"}, "3.11", ""},
		{map[string]string{"requirements-test.txt": "pytest\n"}, "3.11", ""},
		// Met by neither: the default stays.
		{map[string]string{"requirements-test.txt": "pytest>=9\n"}, "3.11", ""},
		// The base does not allow 3.13: its requires-python or its
		// classifiers keep the grade where it was.
		{map[string]string{"pyproject.toml": "[project]\nrequires-python = \">=3.8,<3.13\"\noptional-dependencies = {test = [\"pytest>=8\"]}\n"}, "3.11", `pyproject.toml requires-python ">=3.8,<3.13"`},
		{map[string]string{"requirements-test.txt": "pytest>=8\n", "setup.cfg": "[metadata]\nclassifiers =\n    Programming Language :: Python :: 3.11\n"}, "3.11", ""},
	} {
		base := treeOf(t, tt.files)
		d, _ := Declarations(base)
		got, why := ChoosePython(base, d.PytestPins)
		if got != tt.want || why != tt.why {
			t.Errorf("%v: %s %q, want %s %q", tt.files, got, why, tt.want, tt.why)
		}
	}
}
