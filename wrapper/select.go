package wrapper

import "strings"

// selectTests returns the hidden tests a job runs and, when it selects or
// reverses them, the pytest arguments that run just those (in reverse file
// order when reverse is set) after the sentinels. With neither, it
// returns expected and no arguments: pytest runs the hidden directory.
func selectTests(expected []ExpectedTest, sentinels []Sentinel, sel []string, reverse bool) ([]ExpectedTest, []string) {
	if len(sel) == 0 && !reverse {
		return expected, nil
	}
	want := map[string]bool{}
	for _, id := range sel {
		want[id] = true
	}
	var kept []ExpectedTest
	for _, e := range expected {
		if len(sel) == 0 || want[e.id()] {
			kept = append(kept, e)
		}
	}
	var targets []string
	for _, s := range sentinels {
		targets = append(targets, HiddenDir+"/"+s.id())
	}
	for i := range kept {
		e := kept[i]
		if reverse {
			e = kept[len(kept)-1-i]
		}
		targets = append(targets, HiddenDir+"/"+e.nodeID())
	}
	return kept, targets
}

// id is the sentinel's function id below HiddenDir: its module's file and
// its name.
func (s Sentinel) id() string {
	return strings.ReplaceAll(s.ClassName, ".", "/") + ".py::" + s.Name
}

// id is the test's function id below HiddenDir: "file::name" or
// "file::Class::name", as pytest's node ids have it.
func (e ExpectedTest) id() string {
	if e.Class != "" {
		return e.File + "::" + e.Class + "::" + e.Name
	}
	return e.File + "::" + e.Name
}

// nodeID is the test's pytest node id below HiddenDir: id with a nested
// class's dots as pytest's "::" ("file::TestOuter::TestInner::name").
func (e ExpectedTest) nodeID() string {
	if e.Class != "" {
		return e.File + "::" + strings.ReplaceAll(e.Class, ".", "::") + "::" + e.Name
	}
	return e.File + "::" + e.Name
}
