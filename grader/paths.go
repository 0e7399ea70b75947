package grader

import "github.com/testfirst-app/testfirst/wrapper"

// Paths inside the grading container.
const (
	// RepoDir is where the tree under test is copied inside the container.
	RepoDir = wrapper.RepoDir
	// HiddenDir is the root-owned directory, outside RepoDir, that the
	// wrapper writes the hidden tests to. Code under test that names it is
	// reaching for the tests.
	HiddenDir = wrapper.HiddenDir
)
