package pipeline

import (
	"context"
	"errors"
	"io/fs"
)

// ConfigSource reads one file of a repository at a ref. A missing file is
// an error that is fs.ErrNotExist.
type ConfigSource interface {
	File(ctx context.Context, owner, repo, ref, path string) ([]byte, error)
}

// FetchedConfig is a repository's config as read from its default branch.
// Config holds the defaults whenever there is no usable file.
type FetchedConfig struct {
	Config RepoConfig
	// Missing is true when the repository has no config file.
	Missing bool
	// LoadError says why the file could not be read (GitHub failed): the
	// caller retries.
	LoadError error
	// ParseError says what is wrong with the file: the caller tells the
	// repository, and the defaults apply meanwhile.
	ParseError error
}

// FetchConfig reads RepoConfigPath from the default branch, never from a
// pull request's head.
func FetchConfig(ctx context.Context, src ConfigSource, owner, repo, branch string) FetchedConfig {
	data, err := src.File(ctx, owner, repo, branch, RepoConfigPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return FetchedConfig{Config: DefaultRepoConfig(), Missing: true}
	case err != nil:
		return FetchedConfig{Config: DefaultRepoConfig(), LoadError: err}
	}
	return ParseFetchedConfig(data)
}

// ParseFetchedConfig parses a config file's contents.
func ParseFetchedConfig(data []byte) FetchedConfig {
	c, err := ParseRepoConfig(data)
	if err != nil {
		return FetchedConfig{Config: DefaultRepoConfig(), ParseError: err}
	}
	return FetchedConfig{Config: c}
}
